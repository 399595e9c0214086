"""Charts of difficulty datasets and evaluations (matplotlib to SVG, ``core.charts``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from core import charts

__all__ = ["evaluation_chart_svg", "score_distribution_svg"]


def score_distribution_svg(
    pairs: Sequence[tuple[str, np.ndarray]], perfect: float = 100.0, bin_width: float = 5.0
) -> bytes:
    """Histogram of the evaluated systems' human scores, one line per language pair.

    ``pairs`` holds (language pair, score matrix) with NaN for missing cells. Shares, not counts,
    so pairs of different sizes compare.
    """
    with charts.figure(7.0, 3.2) as figure:
        axes = figure.add_subplot()
        scores = [m[~np.isnan(m)] for _, m in pairs]
        everything = np.concatenate(scores) if scores else np.array([])
        if everything.size == 0:
            charts.no_data(axes, "no scores")
        else:
            low, high = float(everything.min()), float(everything.max())
            span = max(high - low, 1e-9)
            # Stretch to the 0–100 scale, or to the perfect score, only where the scores are
            # on that scale: a z-scored release (WMT DA) spans a few units around 0.
            if perfect == 100.0 and low > -span and high < 100.0 + span:
                low = min(low, 0.0)
            if low - span <= perfect <= high + span:
                low, high = min(low, perfect), max(high, perfect)
            bin_width = min(bin_width, (high - low) / 20) or bin_width
            edges = np.arange(np.floor(low / bin_width) * bin_width, high + bin_width, bin_width)
            if edges.size < 2:
                edges = np.array([low, low + bin_width])
            for (code, _), values in zip(pairs, scores, strict=True):
                if values.size == 0:
                    continue
                axes.hist(
                    values,
                    bins=edges,  # type: ignore[arg-type]  # an array of edges works; the stub wants a Sequence
                    weights=np.full(values.size, 100.0 / values.size),
                    histtype="step",
                    linewidth=1.6,
                    label=f"{code} (n={values.size})",
                )
            axes.legend(frameon=False, loc="upper left")
        axes.set_xlabel("human score")
        axes.set_ylabel("% of scored translations")
        axes.set_title("Score distribution (evaluated systems)", loc="left")
        return charts.svg(figure)


def evaluation_chart_svg(results: dict[str, Any]) -> bytes:
    """DEC per estimator with its bootstrap interval, and the hardest subset's AvgScore next to
    random selection and the full set (seed 002 Table 1 and §6)."""
    estimators = results["estimators"]
    details = results["details"]
    names = sorted(estimators, key=lambda n: -(estimators[n]["dec"] or -np.inf))
    with charts.figure(9.0, 1.2 + 0.38 * len(names)) as figure:
        dec_axes, subset_axes = figure.subplots(1, 2, sharey=True)
        y = np.arange(len(names))
        values = np.array([estimators[n]["dec"] or 0.0 for n in names])
        low = np.zeros(len(names))
        high = np.zeros(len(names))
        for i, name in enumerate(names):
            ci = details[name].get("dec_ci")
            if ci and ci[0] is not None and estimators[name]["dec"] is not None:
                low[i] = max(0.0, values[i] - ci[0])
                high[i] = max(0.0, ci[1] - values[i])
        colours = ["#8a8a8a" if details[n]["group"] == "Oracle" else "#3465a4" for n in names]
        dec_axes.barh(y, values, xerr=[low, high], color=colours, capsize=3)
        dec_axes.axvline(0.0, color="black", linewidth=0.8)
        dec_axes.set_yticks(y, names)
        dec_axes.invert_yaxis()
        dec_axes.set_xlabel("DEC (Kendall τ_b, higher = better)")
        dec_axes.set_title("Difficulty estimation correlation", loc="left")

        avg = np.array([estimators[n]["avg_score"] or np.nan for n in names])
        subset_axes.barh(y, avg, color=colours)
        random_avg = results["random_selection"]["avg_score"]
        full_avg = results["dataset"]["full_set"]["avg_score"]
        if random_avg is not None:
            subset_axes.axvline(
                random_avg, color="#cc0000", linestyle="--", label="random selection"
            )
        if full_avg is not None:
            subset_axes.axvline(full_avg, color="black", linestyle=":", label="full set")
        finite = avg[~np.isnan(avg)]
        if finite.size:
            reference = [v for v in (random_avg, full_avg) if v is not None]
            lo = min(float(finite.min()), *reference) if reference else float(finite.min())
            hi = max(float(finite.max()), *reference) if reference else float(finite.max())
            margin = max(1.0, 0.1 * (hi - lo))
            subset_axes.set_xlim(lo - margin, hi + margin)
        fraction = results["settings"]["subset_fraction"]
        subset_axes.set_xlabel(f"AvgScore of the hardest {fraction:.0%} (lower = harder)")
        subset_axes.set_title("Hardest subset", loc="left")
        subset_axes.legend(
            frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, fontsize=9
        )
        return charts.svg(figure)
