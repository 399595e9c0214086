"""Read queries for parallel corpora: the one permission-checked accessor, and a sample."""

from __future__ import annotations

from django.db.models import QuerySet

from core.access import visible_or_404
from lexical.access import may_use_lexical
from lexical.models import ParallelCorpus, SentencePair

__all__ = ["corpora_for_user", "corpus_for_user", "corpus_pairs"]


def corpora_for_user(user) -> QuerySet[ParallelCorpus]:
    """Staff only (corpora may be licensed data the lab may not publish)."""
    if not may_use_lexical(user):
        return ParallelCorpus.objects.none()
    return ParallelCorpus.objects.select_related("created_by")


def corpus_for_user(user, pk: int) -> ParallelCorpus:
    """The one permission-checked accessor for corpora (pages, API and exports): a 404 for
    anyone who may not see it, so existence does not leak."""
    return visible_or_404(corpora_for_user(user), pk, "No such corpus.")


def corpus_pairs(corpus: ParallelCorpus) -> QuerySet[SentencePair]:
    """Its pairs in file order (the unique (corpus, position) index serves the ordering)."""
    return SentencePair.objects.filter(corpus=corpus).order_by("position")
