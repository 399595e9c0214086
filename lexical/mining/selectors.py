"""Reads of mining jobs: one permission-checked accessor (pages, API, commands)."""

from __future__ import annotations

from django.db.models import QuerySet

from core.access import visible_or_404
from lexical.access import may_use_lexical
from lexical.models import Concept, MiningJob, ParallelCorpus

__all__ = [
    "concepts_of",
    "corpus_by_reference",
    "mining_job_for_user",
    "mining_jobs_for_user",
]


def mining_jobs_for_user(user) -> QuerySet[MiningJob]:
    rows = MiningJob.objects.select_related("corpus")
    return rows.all() if may_use_lexical(user) else rows.none()


def mining_job_for_user(user, pk: int) -> MiningJob:
    """The one accessor for a mining job; a 404 for everyone who may not see it."""
    rows = mining_jobs_for_user(user).select_related("created_by")
    return visible_or_404(rows, pk, "No such mining job.")


def corpora_for_user(user) -> QuerySet[ParallelCorpus]:
    return ParallelCorpus.objects.all() if may_use_lexical(user) else ParallelCorpus.objects.none()


def corpus_by_reference(reference: str) -> ParallelCorpus | None:
    """A corpus by id (digits) or by name."""
    rows = ParallelCorpus.objects.all()
    if reference.isdigit():
        found = rows.filter(pk=int(reference)).first()
        if found is not None:
            return found
    return rows.filter(name=reference).first()


def concepts_of(job: MiningJob) -> QuerySet[Concept]:
    return job.concepts.prefetch_related("variations").order_by("lemma", "pos", "id")
