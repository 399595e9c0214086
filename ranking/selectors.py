"""Read queries for rankings, and the one permission-checked accessor pages, API and downloads
share.

Rankings are research-lead material, like difficulty datasets: staff only, a 404 for everyone
else. A ranking of a challenge-set version shows that version's systems and scores, so it is
visible only to those who may curate challenge sets (``challenge_sets.access``).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from annotation import protocols
from annotation.access import campaigns_visible_to
from annotation.models import Campaign
from challenge_sets.access import may_curate, sets_for
from challenge_sets.models import FrozenVersion
from core.access import is_active_staff, visible_or_404
from difficulty.models import DifficultyDataset
from difficulty.selectors import datasets_for_user
from engines.models import Engine
from ranking import inputs
from ranking.models import SystemRanking
from ranking.results import ranked_rows

__all__ = [
    "campaigns_for_ranking",
    "datasets_for_ranking",
    "qe_engines",
    "ranking_for_user",
    "ranking_page",
    "rankings_for_user",
    "source_options",
    "versions_for_ranking",
]

_VERSION_KINDS = (SystemRanking.InputKind.VERSION, SystemRanking.InputKind.VERSION_QE)


def rankings_for_user(user) -> QuerySet[SystemRanking]:
    if not is_active_staff(user):
        return SystemRanking.objects.none()
    rankings = SystemRanking.objects.select_related(
        "dataset", "campaign", "version__challenge_set", "created_by"
    )
    if not may_curate(user):
        rankings = rankings.exclude(input_kind__in=_VERSION_KINDS)
    return rankings


def ranking_for_user(user, pk: int) -> SystemRanking:
    """The ranking ``pk`` if ``user`` may see it; otherwise 404, as if it did not exist."""
    return visible_or_404(rankings_for_user(user), pk, "No such ranking.")


# --- what can be ranked ----------------------------------------------------------------------


def datasets_for_ranking(user) -> QuerySet[DifficultyDataset]:
    return datasets_for_user(user).order_by("name")


def campaigns_for_ranking(user) -> QuerySet[Campaign]:
    """Campaigns of scored protocols (ESA, MQM): choice and questionnaires rank nothing."""
    if not is_active_staff(user):
        return Campaign.objects.none()
    return campaigns_visible_to(user).filter(protocol__in=protocols.scored()).order_by("name")


def versions_for_ranking(user) -> QuerySet[FrozenVersion]:
    return (
        FrozenVersion.objects.filter(challenge_set__in=sets_for(user))
        .select_related("challenge_set")
        .defer("items_jsonl", "annotations", "manifest")
        .order_by("challenge_set__name", "-number")
    )


def qe_engines() -> QuerySet[Engine]:
    """Enabled engines that can score a translation (the ``quality`` capability)."""
    engines = Engine.objects.filter(enabled=True).order_by("name")
    names = [e.name for e in engines if e.has_capability("quality")]
    return engines.filter(name__in=names)


def source_options(input_kind: str, source: Any) -> dict[str, list[tuple[str, str]]]:
    """The language pairs and scores the form offers for one chosen source (before a source is
    chosen: the scores every source of that kind has)."""
    kinds = SystemRanking.InputKind
    if input_kind == kinds.DATASET:
        return _dataset_options(source)
    codes = [] if source is None else _pairs_of(input_kind, source)
    if input_kind == kinds.CAMPAIGN:
        scores = [
            (inputs.HUMAN, "mean score per segment (0–100)"),
            (inputs.RAW, "individual judgments (0–100)"),
            (inputs.Z_SCORE, "individual judgments, z per annotator (WMT)"),
        ]
    elif input_kind == kinds.VERSION_QE:
        scores = [(e.name, e.name) for e in qe_engines()]
    else:
        scores = [(inputs.HUMAN, "human scores from validation")]
    return {"language_pairs": [(c, c) for c in codes], "scores": scores}


def _dataset_options(dataset: DifficultyDataset | None) -> dict[str, list[tuple[str, str]]]:
    if dataset is None:
        return {"language_pairs": [], "scores": [(inputs.HUMAN, "human score")]}
    codes = list(dataset.language_pairs.order_by("code").values_list("code", flat=True))
    named = inputs.human_score_name(dataset)
    labels = {inputs.HUMAN: f"human score ({named})" if named else "human score"}
    if dataset.language_pairs.filter(n_judgments__gt=0).exists():  # else "raw" is a field's name
        labels |= {
            inputs.RAW: "individual judgments (raw)",
            inputs.Z_SCORE: "individual judgments, z per annotator",
        }
    scores = [(field, labels.get(field, field)) for field in inputs.dataset_score_fields(dataset)]
    return {"language_pairs": [(c, c) for c in codes], "scores": scores}


def _pairs_of(input_kind: str, source: Any) -> list[str]:
    if input_kind == SystemRanking.InputKind.CAMPAIGN:
        return [f"{source.src_lang}-{source.tgt_lang}"] if source.src_lang else []
    return inputs.version_language_pairs(source)


# --- the ranking page --------------------------------------------------------------------------


def ranking_page(ranking: SystemRanking) -> dict[str, Any]:
    """What the ranking page shows of a finished ranking: rows with cluster rules, the p-value
    table, the settings and the notes."""
    result = ranking.result
    rows = ranked_rows(result)
    p_values = result["ranking"]["p_values"]
    return {
        "rows": rows,
        "n_clusters": len({row.cluster for row in rows}),
        "p_table": [
            (row, [_p_cell(p_values[k][j], ranking.alpha) for j in range(len(rows))])
            for k, row in enumerate(rows)
        ],
        "notes": result["input"].get("notes", []),
        "description": result["input"]["description"],
        "n_segments": result["input"]["n_segments"],
        "confidence": round(100 * result.get("confidence", 0.95)),
    }


def _p_cell(value: float | None, alpha: float) -> tuple[str, bool]:
    """A p-value as the table prints it (small ones in scientific notation), and whether it is
    significant."""
    if value is None:
        return "–", False
    text = f"{value:.1e}" if value < 0.001 else f"{value:.4f}"
    return text, value < alpha
