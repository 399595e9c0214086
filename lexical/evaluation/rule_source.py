"""Where an evaluation reads the rules it shows (seed 004 §3–4).

INTEGRATION POINT: the ``Rule`` model belongs to the rules sub-package
(``lexical/models/rules.py``: ``Rule(job, concept, variation, text, generator,
validation_status)``), built on another branch. It is imported inside :func:`rules_for`, so
this module (and the whole evaluation) imports cleanly without it; until the rules land,
asking for rules raises :class:`RulesUnavailable`, which the evaluation reports as a field
error ("no rules from ..."). The integrator checks the field names used below (``generator``,
``job_id``, ``text``) against the real model.
Tests inject rules by monkeypatching :func:`rules_for`.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["RulesUnavailable", "rules_for"]


class RulesUnavailable(RuntimeError):
    """The rules model is not installed in this build."""


def rules_for(concept_ids: Iterable[int], generator: str) -> dict[int, dict[int, str]]:
    """The rules that engine ``generator`` wrote for these concepts:
    ``{concept id: {variation id: rule text}}``; a concept without rules is absent.

    When a concept has several rule sets from the same generator (it was regenerated), the
    newest one wins (the highest job id, then rule id).
    """
    try:
        from lexical.models import Rule  # type: ignore[attr-defined]  # the rules branch
    except ImportError:
        raise RulesUnavailable("rule generation is not installed in this build") from None
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
