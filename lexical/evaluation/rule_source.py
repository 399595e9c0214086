"""Where an evaluation reads the rules it uses (seed 004 §3–4): the newest rule set each
generator wrote per concept. Tests inject rules by monkeypatching :func:`rules_for`."""

from __future__ import annotations

from collections.abc import Iterable

from lexical.models import Rule

__all__ = ["rules_for"]


def rules_for(concept_ids: Iterable[int], generator: str) -> dict[int, dict[int, str]]:
    """The rules that engine ``generator`` wrote for these concepts:
    ``{concept id: {variation id: rule text}}``; a concept without rules is absent.

    When a concept has several rule sets from the same generator (it was regenerated), the
    newest one wins (the highest job id, then rule id).
    """
    rows = (
        Rule.objects.filter(concept_id__in=list(concept_ids), generator=generator)
        .exclude(text="")
        .order_by("concept_id", "job_id", "id")
        .values_list("concept_id", "job_id", "variation_id", "text")
    )
    newest_job: dict[int, int] = {}
    rules: dict[int, dict[int, str]] = {}
    for concept_id, job_id, variation_id, text in rows:
        if newest_job.get(concept_id) != job_id:
            # A later job replaces what an earlier one wrote for the concept.
            newest_job[concept_id] = job_id
            rules[concept_id] = {}
        rules[concept_id][variation_id] = text
    return rules
