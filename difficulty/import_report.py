"""A dataset's import report in words (no Django): what the importer read from elsewhere, chose,
or let through rather than refuse a released file, as the command, the page, the API's job
summary and the background job say it.

The report is the JSON object ``DifficultyDataset.import_report``; each reader documents its keys
(``difficulty.releases.mtme``, ``difficulty.releases.wmt_da``, ``annotation.formats.google_mqm``
through ``difficulty.services.datasets.import_mqm_tsv_dataset``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["report_lines"]


def _plural(n: int, word: str, many: str = "") -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def _where(items: Sequence[Any], total: int, word: str = "line") -> str:
    shown = ", ".join(str(item) for item in items)
    more = ", ..." if total > len(items) else ""
    return f"{word}{'s' if len(items) != 1 else ''} {shown}{more}"


def _per_pair(mapping: Mapping[str, Sequence[str]]) -> str:
    return "; ".join(f"{lp}: {', '.join(names)}" for lp, names in sorted(mapping.items()))


def _google_mqm(report: Mapping[str, Any], file_name: str) -> list[str]:
    lines = []
    pair = report.get("language_pair_from_file_name")
    if pair:
        lines.append(
            f"languages {pair} read from the file name {report.get('member') or file_name}"
        )
    member = f" of {report['member']}" if report.get("member") else ""
    rows = report.get("unbalanced_mark_rows", 0)
    if rows:
        where = _where(report.get("unbalanced_mark_lines", []), rows) + member
        lines.append(
            f"{_plural(rows, 'row')} with unbalanced <v>…</v> marks ({where}) imported with the "
            "error unlocated: category and severity kept, no span"
        )
    hotw = report.get("checks", {}).get("HOTW-test", 0)
    if hotw:
        where = _where(report.get("check_lines", []), hotw) + member
        lines.append(
            f"{_plural(hotw, 'HOTW-test row')} ({where}) counted as checks planted for the "
            "raters, not as errors of the translation"
        )
    unrated = report.get("unrated_cells", 0)
    if unrated:
        lines.append(
            f"{_plural(unrated, '(system, segment) cell')} rated only by checks left unscored"
        )
    return lines


def _mtme(report: Mapping[str, Any]) -> list[str]:
    found = ", ".join(report.get("human_scores_found", []))
    lines = [
        f"mt-metrics-eval test set {report.get('test_set')}: human score "
        f"{report.get('human_score')} (segment level; the test set has {found})"
    ]
    none_cells = report.get("none_cells", 0)
    if none_cells:
        lines.append(f"{_plural(none_cells, 'None cell')} (not scored) left unscored")
    if report.get("unscored_systems"):
        lines.append(
            "systems with no scored segment left out: " + _per_pair(report["unscored_systems"])
        )
    if report.get("scored_without_output"):
        lines.append(
            "scored systems without an output file kept without translations: "
            + _per_pair(report["scored_without_output"])
        )
    if any(report.get("references", {}).values()):
        lines.append(
            "systems named by references/ marked as human references: "
            + _per_pair(report["references"])
        )
    blank = report.get("blank_score_lines", 0)
    if blank:
        lines.append(f"{_plural(blank, 'blank line')} of the score files skipped")
    return lines


def _wmt_da(report: Mapping[str, Any]) -> list[str]:
    kind = "z-scores" if report.get("score_kind") == "z" else "raw scores"
    lines = [f"WMT crowd DA: scores are the per-segment means of the {kind}; no texts"]
    checks = report.get("checks", {})
    if checks:
        kinds = ", ".join(f"{name} {n:,}" for name, n in sorted(checks.items()))
        lines.append(
            f"{_plural(sum(checks.values()), 'quality-control row')} ({kinds}) counted as "
            "checks, not scored"
        )
    if report.get("repeats"):
        lines.append(
            f"{_plural(report['repeats'], 'REPEAT judgment')} kept as judgments marked as repeats"
        )
    if report.get("none_cells"):
        lines.append(f"{_plural(report['none_cells'], 'NA cell')} of the means left unscored")
    duplicates = report.get("duplicate_rows", 0)
    if duplicates:
        where = _where(report.get("duplicate_lines", []), duplicates, "at")
        lines.append(
            f"{_plural(duplicates, 'row')} repeating an earlier row exactly skipped ({where})"
        )
    if report.get("judgments_without_mean"):
        lines.append(
            f"{_plural(report['judgments_without_mean'], 'judgment')} of a (system, segment) "
            "the means file lacks skipped"
        )
    if report.get("without_judgments"):
        lines.append(
            "no judgments file (scores only) for " + ", ".join(report["without_judgments"])
        )
    if report.get("ignored_files"):
        lines.append("not read (another copy was): " + ", ".join(report["ignored_files"]))
    return lines


def report_lines(report: Mapping[str, Any], file_name: str = "") -> list[str]:
    """The report in sentences (no final stop)."""
    release = report.get("release")
    if release == "mt-metrics-eval":
        return _mtme(report)
    if release == "wmt-da":
        return _wmt_da(report)
    return _google_mqm(report, file_name)
