"""Read queries for discrimination analyses, and the one permission-checked accessor that pages,
the API and downloads share.

Staff only, like rankings; an analysis of a challenge-set version only for those who may curate
challenge sets (it shows the version's segments and scores). The subjects offered are the ones
each app's own accessor lets the user see.
"""

from __future__ import annotations

import itertools
from typing import Any

from django.db.models import QuerySet

from challenge_sets.access import may_curate
from challenge_sets.models import FrozenVersion
from core.access import is_active_staff, visible_or_404
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from difficulty.selectors import datasets_for_user, evaluations_for_user
from ranking import selectors as ranking_selectors
from ranking.subsets import exports, inputs
from ranking.subsets.models import DiscriminationAnalysis
from search.breaker import selectors as breaker_selectors

__all__ = [
    "analyses_for_user",
    "analysis_for_user",
    "analysis_page",
    "comparison_names_for",
    "comparison_summary",
    "datasets_for",
    "evaluation_summary",
    "evaluations_for",
    "may_measure",
    "version_summary",
    "versions_for",
]

Kind = DiscriminationAnalysis.SubjectKind


may_measure = is_active_staff


def analyses_for_user(user) -> QuerySet[DiscriminationAnalysis]:
    if not may_measure(user):
        return DiscriminationAnalysis.objects.none()
    analyses = DiscriminationAnalysis.objects.select_related(
        "version__challenge_set", "dataset", "evaluation", "created_by"
    )
    if not may_curate(user):
        analyses = analyses.exclude(subject_kind=Kind.VERSION)
    return analyses


def analysis_for_user(user, pk: int) -> DiscriminationAnalysis:
    """The analysis ``pk`` if ``user`` may see it; otherwise 404, as if it did not exist."""
    return visible_or_404(analyses_for_user(user), pk, "No such discrimination analysis.")


# --- what can be measured ------------------------------------------------------------------


def versions_for(user) -> QuerySet[FrozenVersion]:
    return ranking_selectors.versions_for_ranking(user) if may_measure(user) else (
        FrozenVersion.objects.none())  # fmt: skip


def datasets_for(user) -> QuerySet[DifficultyDataset]:
    return datasets_for_user(user).order_by("name")


def evaluations_for(user) -> QuerySet[DifficultyEvaluation]:
    return evaluations_for_user(user).filter(status=DifficultyEvaluation.Status.DONE)


def comparison_names_for(user) -> list[str]:
    return breaker_selectors.comparison_names() if breaker_selectors.may_see_runs(user) else []


# --- what the pages show -----------------------------------------------------------------------


def _latest(analyses: QuerySet[DiscriminationAnalysis]) -> DiscriminationAnalysis | None:
    return analyses.defer("scores", "state").order_by("-created_at", "-id").first()


def version_summary(user, version: FrozenVersion) -> dict[str, Any]:
    """The version section: its latest analysis, with the headline of a finished one."""
    analysis = _latest(analyses_for_user(user).filter(version=version))
    refusal = inputs.version_refusal(version) if analysis is None else None
    return {"version": version, "analysis": analysis, "headline": _headline(analysis),
            "refusal": refusal}  # fmt: skip


def evaluation_summary(user, evaluation: DifficultyEvaluation) -> dict[str, Any]:
    """The DEC evaluation section: per estimator (and the human-score oracle) its latest
    analysis, one query."""
    latest: dict[str, DiscriminationAnalysis] = {}
    found = analyses_for_user(user).filter(evaluation=evaluation).defer("scores", "state")
    for analysis in found.order_by("created_at", "id"):
        latest[analysis.estimator] = analysis
    rows = []
    for estimator in [inputs.ORACLE, *evaluation.estimators]:
        found_one = latest.get(estimator)
        rows.append(
            {"estimator": estimator, "analysis": found_one, "headline": _headline(found_one)}
        )
    return {"evaluation": evaluation, "rows": rows}


def comparison_summary(user, comparison: str) -> dict[str, Any]:
    analysis = _latest(analyses_for_user(user).filter(comparison=comparison))
    headlines = []
    if analysis is not None and analysis.status == DiscriminationAnalysis.Status.DONE:
        headlines = [(s["label"], exports.headline(s)) for s in analysis.result["subsets"]]
    return {"comparison": comparison, "analysis": analysis, "headlines": headlines}


def _headline(analysis: DiscriminationAnalysis | None) -> dict[str, Any] | None:
    if analysis is None or analysis.status != DiscriminationAnalysis.Status.DONE:
        return None
    subsets = analysis.result.get("subsets") or []
    return exports.headline(subsets[0]) if subsets else None


def analysis_page(analysis: DiscriminationAnalysis) -> dict[str, Any]:
    """A finished analysis as its page shows it: per subset its headline and, per size, the
    measures against the random band; the full set; the model gaps of a comparison."""
    result = analysis.result
    subsets = [
        {
            "label": subset["label"],
            "curve": subset["curve"],
            "headline": exports.headline(subset),
            "points": [{"point": p, "rows": exports.point_rows(p)} for p in subset["points"]],
        }
        for subset in result["subsets"]
    ]
    full = [
        {"label": label, "value": result["full"].get(field)}
        for field, label in exports.FIELD_LABELS.items()
    ]
    gaps = result.get("gaps")
    return {
        "subject": result["subject"],
        "settings": result["settings"],
        "subsets": subsets,
        "full": full,
        "full_ranking": list(
            zip(
                result["full_ranking"]["systems"],
                result["full_ranking"]["means"],
                result["full_ranking"]["clusters"],
                strict=True,
            )
        ),
        "gaps": _gaps_table(gaps) if gaps else None,
    }


def _gaps_table(gaps: dict[str, Any]) -> dict[str, Any]:
    systems = gaps["systems"]
    return {
        "systems": systems,
        "pairs": [f"{a} − {b}" for a, b in itertools.pairwise(systems)],
        "rows": gaps["rows"],
    }
