"""What people said about breaker runs, per method × system (seed 001 Table 6 and Table 11),
and the calibration of QE on human scores (reads only; see ``search.breaker.humans``).

Per method (run) and system (each target translator, then the ``Human`` translations): the
selected texts, the mean QE, the mean human score (0–100, QC-passing annotators only), the
non-scorable rate (flagged judgments / judgments) and the MQM error-category shares over the
MQM and ESA+MQM campaigns' spans.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

import numpy as np

from annotation.models import Campaign
from annotation.selectors import campaign_progress
from difficulty.calibration import (
    Calibration,
    agreement,
    cross_validated_predictions,
    fit_calibration,
)
from search.breaker.humans import human_score, qe_of
from search.breaker.methods import spec
from search.models import BreakerCampaign, BreakerChain, BreakerRun, BreakerStep

__all__ = ["CalibrationReport", "ReportRow", "calibration_report", "campaign_rows", "human_report"]

CV_STREAM = 11  # the calibration's folds: a random stream of the runs' seeds of its own


@dataclass
class ReportRow:
    run: BreakerRun
    method: str
    system: str
    texts: int = 0
    qe: list[float] = field(default_factory=list)
    human: list[float] = field(default_factory=list)
    judgments: int = 0
    non_scorable: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    share_cells: list[float | None] = field(default_factory=list)
    """Percent of this row's spans per category of the report's columns (``None``: none)."""

    @property
    def mean_qe(self) -> float | None:
        return fmean(self.qe) if self.qe else None

    @property
    def mean_human(self) -> float | None:
        return fmean(self.human) if self.human else None

    @property
    def non_scorable_rate(self) -> float | None:
        return self.non_scorable / self.judgments if self.judgments else None

    @property
    def category_shares(self) -> dict[str, float]:
        total = sum(self.categories.values())
        return {k: v / total for k, v in self.categories.items()} if total else {}


def _selected_steps(runs: list[BreakerRun]) -> dict[int, list[BreakerStep]]:
    """Each run's selected steps, in chain order (two queries)."""
    chains = BreakerChain.objects.filter(run__in=runs, selected_step__isnull=False)
    wanted = {
        (c.pk, c.selected_step): c.run_id for c in chains.only("pk", "run_id", "selected_step")
    }
    steps: dict[int, list[BreakerStep]] = {run.pk: [] for run in runs}
    rows = BreakerStep.objects.filter(chain__in=chains).order_by("chain__index")
    for step in rows.only("pk", "chain_id", "index", "translations", "qe", "human",
                          "human_translations"):  # fmt: skip
        run_id = wanted.get((step.chain_id, step.index))
        if run_id is not None:
            steps[run_id].append(step)
    return steps


def _row(run: BreakerRun, system: str, steps: list[BreakerStep]) -> ReportRow:
    row = ReportRow(run, spec(run.method).label, system)
    for step in steps:
        human_text = (step.human_translations.get(system) or {}).get("text", "")
        if not (step.translations.get(system) or human_text):
            continue
        row.texts += 1
        if (qe := qe_of(step, system)) is not None:
            row.qe.append(qe)
        if (score := human_score(step, system)) is not None:
            row.human.append(score)
        for entry in step.human.get(system, {}).values():
            row.judgments += entry["judgments"]
            row.non_scorable += entry["non_scorable"]
            row.categories.update(entry["categories"] or {})
    return row


def human_report(runs: list[BreakerRun]) -> dict[str, Any]:
    """Rows per method × system, and the category columns that occur (most frequent first)."""
    steps = _selected_steps(runs)
    rows = []
    for run in runs:
        humans = sorted({name for s in steps[run.pk] for name in s.human_translations})
        rows += [_row(run, system, steps[run.pk]) for system in [*run.targets, *humans]]
    totals: Counter[str] = Counter()
    for row in rows:
        totals.update(row.categories)
    categories = [name for name, _ in totals.most_common()]
    for row in rows:
        shares = row.category_shares
        row.share_cells = [100 * shares[c] if c in shares else None for c in categories]
    return {
        "rows": rows,
        "categories": categories,
        "judged": any(row.judgments for row in rows),
    }


def campaign_rows(runs: list[BreakerRun]) -> list[dict[str, Any]]:
    """The campaigns the runs were sent to, newest first, with their progress."""
    links = BreakerCampaign.objects.filter(run__in=runs).values_list("campaign_id", "purpose")
    purposes = dict(links)
    campaigns = Campaign.objects.filter(pk__in=purposes).order_by("-created_at", "-id")
    return [
        {
            "campaign": c,
            "purpose": purposes[c.pk],
            "purpose_label": BreakerCampaign.Purpose(purposes[c.pk]).label,
            "progress": campaign_progress(c),
        }
        for c in campaigns
    ]


@dataclass(frozen=True)
class CalibrationReport:
    """QE quality calibrated on human scores with an isotonic map (``difficulty.calibration``)."""

    n_pairs: int
    mapping: Calibration
    before: dict[str, float | None]
    after: dict[str, float | None]
    """Cross-validated: each pair scored by a map fitted without it (``validation`` says how)."""
    rows: list[dict[str, Any]]
    folds: int = 0
    validation: str = "not fitted"

    @property
    def fitted(self) -> bool:
        return bool(self.mapping.x)

    @property
    def points(self) -> list[tuple[float, float]]:
        return list(zip(self.mapping.x, self.mapping.y, strict=True))


def _agreement(estimate: np.ndarray, human: np.ndarray) -> dict[str, float | None]:
    summary = agreement(estimate, human)
    return {"kendall_tau": summary.kendall_tau, "mae": summary.mean_abs_error}


def calibration_report(runs: list[BreakerRun]) -> CalibrationReport:
    """Fit QE → human score on every (selected step, target) people scored; Kendall tau and MAE
    against the human scores before and after (cross-validated); each method's mean QE,
    calibrated QE (over all its selected texts) and human score."""
    steps = _selected_steps(runs)
    pairs = [
        (qe, score)
        for run in runs
        for step in steps[run.pk]
        for target in run.targets
        if (qe := qe_of(step, target)) is not None
        and (score := human_score(step, target)) is not None
    ]
    automatic_all = np.array([p[0] for p in pairs], dtype=np.float64)
    human_all = np.array([p[1] for p in pairs], dtype=np.float64)
    mapping = fit_calibration(automatic_all, human_all)
    rows = []
    for run in runs:
        automatic = [
            q for s in steps[run.pk] for t in run.targets if (q := qe_of(s, t)) is not None
        ]
        scores = [
            h for s in steps[run.pk] for t in run.targets if (h := human_score(s, t)) is not None
        ]
        calibrated = mapping.apply(np.array(automatic)) if automatic else np.array([])
        rows.append({
            "run": run, "method": spec(run.method).label,
            "qe": fmean(automatic) if automatic else None,
            "calibrated": float(calibrated.mean()) if calibrated.size else None,
            "human": fmean(scores) if scores else None, "n_human": len(scores),
        })  # fmt: skip
    # Scored on held-out pairs: on its own training pairs the map looks better than it is.
    seeds = [run.seed & 0x7FFFFFFF for run in runs]
    held = cross_validated_predictions(
        automatic_all, human_all, np.random.default_rng([*seeds, CV_STREAM])
    )
    return CalibrationReport(
        n_pairs=len(pairs),
        mapping=mapping,
        before=_agreement(automatic_all, human_all),
        after=_agreement(held.predictions, human_all),
        rows=rows,
        folds=held.n_folds,
        validation=held.method,
    )
