"""A discrimination analysis's result as tables: the page's rows, the CSV download, the command's
text. No Django: everything reads the stored result (``services.build_result``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from formats.spreadsheet import csv_text

__all__ = [
    "FIELD_LABELS",
    "FORMATS",
    "closest_point",
    "csv_download",
    "headline",
    "json_download",
    "point_rows",
    "render",
    "text_table",
]

# Every measure of ranking.discrimination.FIELDS, in the order the page and the chart show them.
FIELD_LABELS: dict[str, str] = {
    "n_clusters_stepwise": "Clusters (stepwise, Zouhar et al. 2025a)",
    "n_clusters": "Clusters (WMT's rule)",
    "mean_adjacent_p_full_order": "Mean p, neighbours in the full set's order",
    "mean_adjacent_p": "Mean p, neighbours in the subset's order",
    "mean_adjacent_gap": "Mean gap between neighbours",
    "mean_difficulty": "Average difficulty",
    "kendall_tau": "Kendall τ against the full set",
    "spa": "SPA against the full set",
}
# Decimals the page shows (clusters are counts; their random mean keeps one decimal).
DIGITS = {"n_clusters_stepwise": 0, "n_clusters": 0, "mean_adjacent_gap": 2, "mean_difficulty": 2}
# Which way is better for a subset that separates systems (the page marks the better side).
LOWER_IS_BETTER = {"mean_adjacent_p", "mean_adjacent_p_full_order"}
TARGET = 0.25  # the headline's subset size on a curve: seed 002's and the issue's hardest 25 %


def closest_point(points: list[dict[str, Any]], target: float = TARGET) -> dict[str, Any] | None:
    if not points:
        return None
    return min(points, key=lambda p: (abs(p["fraction"] - target), p["fraction"]))


def _number(value: Any, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def headline(subset: dict[str, Any]) -> dict[str, Any] | None:
    """ "separates systems: n clusters vs random m ± s" for one subset (its 25 % point on a
    curve), with both cluster rules."""
    point = closest_point(subset["points"])
    if point is None:
        return None
    out: dict[str, Any] = {"fraction": point["fraction"], "size": point["size"]}
    for field in ("n_clusters_stepwise", "n_clusters", "mean_adjacent_p_full_order"):
        out[field] = {
            "value": point["subset"][field],
            "mean": point["random_mean"][field],
            "sd": point["random_sd"][field],
        }
    return out


def point_rows(point: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per measure: the subset's value, the random subsets' mean and sd, and whether
    the subset is better than the band's mean."""
    rows = []
    for field, label in FIELD_LABELS.items():
        value, mean = point["subset"].get(field), point["random_mean"].get(field)
        better = None
        if field != "mean_difficulty" and value is not None and mean is not None and value != mean:
            better = value < mean if field in LOWER_IS_BETTER else value > mean
        digits = DIGITS.get(field, 3)
        rows.append({"field": field, "label": label, "value": value, "mean": mean,
                     "sd": point["random_sd"].get(field), "better": better,
                     "digits": digits, "band_digits": max(digits, 2)})  # fmt: skip
    return rows


CSV_HEADER = ["part", "label", "fraction", "size", "measure", "value", "random_mean", "random_sd"]


def _csv_rows(result: dict[str, Any]) -> Iterator[list[Any]]:
    n_segments = result["subject"]["n_segments"]
    for field in FIELD_LABELS:
        yield ["full set", result["subject"]["full_description"], 1.0, n_segments, field,
               result["full"].get(field), "", ""]  # fmt: skip
    for subset in result["subsets"]:
        for point in subset["points"]:
            for field in FIELD_LABELS:
                yield ["subset", subset["label"], point["fraction"], point["size"], field,
                       point["subset"].get(field), point["random_mean"].get(field),
                       point["random_sd"].get(field)]  # fmt: skip
    gaps = result.get("gaps")
    if gaps:
        systems = gaps["systems"]
        for row in gaps["rows"]:
            for system, mean in zip(systems, row["means"], strict=True):
                yield ["model gaps", row["label"], "", row["size"], f"mean {system}", mean, "", ""]
            for k, gap in enumerate(row["gaps"]):
                measure = f"gap {systems[k]} - {systems[k + 1]}"
                yield ["model gaps", row["label"], "", row["size"], measure, gap, "", ""]


def csv_download(result: dict[str, Any]) -> str:
    """Spreadsheet-safe CSV (names come from imported files and engines)."""
    return csv_text(CSV_HEADER, _csv_rows(result))


def json_download(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


# The analysis's downloads, in ``ranking.tables``'s shape: format -> (content type, extension).
FORMATS = {
    "csv": ("text/csv; charset=utf-8", "csv"),
    "json": ("application/json", "json"),
    "text": ("text/plain; charset=utf-8", "txt"),
}


def render(result: dict[str, Any], fmt: str) -> str:
    """The result in ``fmt`` (one of :data:`FORMATS`)."""
    return {"csv": csv_download, "json": json_download, "text": text_table}[fmt](result)


def _band(point: dict[str, Any], field: str, digits: int) -> str:
    value = _number(point["subset"].get(field), digits)
    mean = _number(point["random_mean"].get(field), digits)
    sd = _number(point["random_sd"].get(field), digits)
    return f"{value} vs {mean} ± {sd}"


def text_table(result: dict[str, Any]) -> str:
    """The command's output: per subset and size, the subset against random subsets of that
    size (mean ± sd)."""
    settings = result["settings"]
    lines = [
        f"{result['subject']['description']}",
        f"compared with {result['subject']['full_description']} and {settings['n_random']} "
        f"random subsets of each size ({settings['test']}, α = {settings['alpha']}, "
        f"seed {settings['seed']}); each cell: subset vs random mean ± sd",
    ]
    header = (
        f"{'size':>10}  {'clusters (stepwise)':>20}  {'clusters (WMT)':>20}  "
        f"{'mean p, full order':>24}  {'mean gap':>20}  {'Kendall tau':>20}"
    )
    for subset in result["subsets"]:
        lines += ["", subset["label"], header]
        for point in subset["points"]:
            size = f"{point['size']} ({point['fraction']:.0%})"
            lines.append(
                f"{size:>10}  {_band(point, 'n_clusters_stepwise', 1):>20}  "
                f"{_band(point, 'n_clusters', 1):>20}  "
                f"{_band(point, 'mean_adjacent_p_full_order', 3):>24}  "
                f"{_band(point, 'mean_adjacent_gap', 2):>20}  {_band(point, 'kendall_tau', 2):>20}"
            )
    for note in result["subject"]["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"
