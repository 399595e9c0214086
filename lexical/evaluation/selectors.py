"""Reads of evaluations: the permission-checked accessor, the graded answers, the results
(summary with the frequency baseline, per-concept table, position bias, charts) and the CSV
exports. Staff only: evaluations spend the lab's money and show unpublished data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse, StreamingHttpResponse

from core.access import visible_or_404
from core.http import download, streamed_download
from formats.spreadsheet import csv_lines, csv_text
from lexical.access import may_use_lexical
from lexical.evaluation import charts, metrics
from lexical.evaluation.entries import TRANSLATE, Entry
from lexical.models import LexicalAnswer, LexicalEvaluation
from lexical.studies.selection_study.selectors import HumanRow, human_row

__all__ = [
    "ANSWER_HEADER",
    "SUMMARY_HEADER",
    "Results",
    "answers_csv_response",
    "evaluation_for_user",
    "evaluations_for_user",
    "graded",
    "results",
    "summary_csv_response",
]


def evaluations_for_user(user) -> QuerySet[LexicalEvaluation]:
    if not may_use_lexical(user):
        return LexicalEvaluation.objects.none()
    return LexicalEvaluation.objects.select_related("selection")


def evaluation_for_user(user, pk: int) -> LexicalEvaluation:
    """The one permission-checked accessor for evaluations (pages, API and exports)."""
    rows = evaluations_for_user(user).select_related("created_by")
    return visible_or_404(rows, pk, "No such evaluation.")


def entries(evaluation: LexicalEvaluation) -> list[Entry]:
    return [Entry.from_dict(e) for e in evaluation.entries]


def _answers(evaluation: LexicalEvaluation) -> QuerySet[LexicalAnswer]:
    return LexicalAnswer.objects.filter(evaluation=evaluation).order_by(
        "entry_key", "run", "example_id"
    )


def graded(evaluation: LexicalEvaluation) -> list[metrics.Graded]:
    """Every stored answer as a metrics record (concept and language from the snapshot)."""
    examples = {e["id"]: e for e in evaluation.snapshot.get("examples", [])}
    concepts = evaluation.snapshot.get("concepts", {})
    rows = _answers(evaluation).values_list(
        "entry_key", "run", "example_id", "correct", "chosen_id", "option_order"
    )
    out = []
    for key, run, example_id, correct, chosen, order in rows.iterator():
        concept = examples[example_id]["concept"]
        position = order.index(chosen) if chosen is not None and chosen in order else None
        language = concepts[str(concept)]["language"]
        out.append(
            metrics.Graded(key, run, example_id, concept, language, correct, position, len(order))
        )
    return out


def baseline(evaluation: LexicalEvaluation) -> list[metrics.Graded]:
    concepts = evaluation.snapshot.get("concepts", {})
    examples = [
        (e["id"], e["concept"], concepts[str(e["concept"])]["language"], e["variation"])
        for e in evaluation.snapshot.get("examples", [])
    ]
    counts = {
        int(c): [(v["id"], v["count"]) for v in data["variations"]] for c, data in concepts.items()
    }
    return metrics.frequency_baseline(examples, counts)


@dataclass(frozen=True)
class SummaryLine:
    entry: Entry | None  # None: the frequency baseline
    row: metrics.SummaryRow
    reasked: int
    unparsed: int  # chat answers still outside the template after the reminder, or NMT unmatched
    errors: int

    @property
    def label(self) -> str:
        return metrics.BASELINE if self.entry is None else self.entry.engine

    @property
    def setting(self) -> str:
        return "most frequent variation" if self.entry is None else self.entry.setting_label


@dataclass(frozen=True)
class ConceptLine:
    concept: int
    lemma: str
    variations: list[str]
    examples: int
    accuracies: list[float | None]  # per entry (None: no answer yet), then the baseline


@dataclass(frozen=True)
class BiasChart:
    size: int
    series: list[tuple[str, list[int]]]


@dataclass(frozen=True)
class Results:
    summary: list[SummaryLine]
    concepts: list[ConceptLine]
    bias: list[BiasChart]
    entries: list[Entry]
    language: str


def _counts(evaluation: LexicalEvaluation) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {}
    for key, reasked, chosen, error in _answers(evaluation).values_list(
        "entry_key", "reasked", "chosen_id", "error"
    ):
        c = counts.setdefault(key, Counter())
        c["reasked"] += int(reasked)
        c["unparsed"] += int(chosen is None and not error)
        c["errors"] += int(bool(error))
    return counts


def results(evaluation: LexicalEvaluation) -> Results:
    records = graded(evaluation)
    base = baseline(evaluation)
    by_key = {e.key: e for e in entries(evaluation)}
    counts = _counts(evaluation)
    order = {key: i for i, key in enumerate(by_key)}
    rows = sorted(metrics.summarise(records), key=lambda r: (r.language, order.get(r.entry, 0)))
    summary = [
        SummaryLine(
            by_key.get(r.entry),
            r,
            **{k: counts[r.entry][k] for k in ("reasked", "unparsed", "errors")},
        )
        for r in rows
        if r.entry in by_key
    ]
    summary += [SummaryLine(None, r, 0, 0, 0) for r in metrics.summarise(base)]
    per = {(row.entry, row.concept): row.accuracy for row in metrics.per_concept([*records, *base])}
    concepts = evaluation.snapshot.get("concepts", {})
    examples = Counter(e["concept"] for e in evaluation.snapshot.get("examples", []))
    keys = [*by_key, metrics.BASELINE]
    concept_lines = [
        ConceptLine(
            int(c),
            data["lemma"],
            [v["label"] for v in data["variations"]],
            examples[int(c)],
            [per.get((key, int(c))) for key in keys],
        )
        for c, data in sorted(concepts.items(), key=lambda kv: kv[1]["lemma"])
    ]
    bias_counts = metrics.position_bias(records)
    bias = [
        BiasChart(
            size, [(key, bias_counts[(key, size)]) for key in by_key if (key, size) in bias_counts]
        )
        for size in (2, 3)
    ]
    return Results(
        summary=summary,
        concepts=concept_lines,
        bias=[b for b in bias if b.series],
        entries=list(by_key.values()),
        language=evaluation.snapshot.get("tgt_lang", evaluation.selection.tgt_lang),
    )


def panels(evaluations: Iterable[LexicalEvaluation]) -> list[charts.Panel]:
    """Fig. 2 panels, one per language, from these evaluations' micro accuracies (a later
    evaluation of the same (language, engine, setting) replaces an earlier one)."""
    bars: dict[str, dict[tuple[str, str], charts.Bar]] = {}
    baselines: dict[str, float] = {}
    for evaluation in evaluations:
        summary = results(evaluation).summary
        for line in summary:
            if line.entry is None:
                baselines[line.row.language] = line.row.micro_mean
                continue
            entry = line.entry
            bar = charts.Bar(
                entry.engine,
                entry.setting,
                _bar_label(entry),
                line.row.micro_mean,
                line.row.micro_sd,
            )
            bars.setdefault(line.row.language, {})[(entry.engine, entry.key)] = bar
    return [
        charts.Panel(language, list(bars[language].values()), baselines.get(language))
        for language in sorted(bars)
    ]


def _bar_label(entry: Entry) -> str:
    if entry.kind == TRANSLATE:
        return "NMT"
    return {"none": "no rules", "self": "self-generated rules"}.get(
        entry.setting, entry.setting_label
    )


def chart_svg(evaluations: Iterable[LexicalEvaluation]) -> bytes:
    return charts.accuracy_chart_svg(panels(evaluations))


def summary_record(line: SummaryLine) -> dict:
    """One line of the accuracy table as the API and the command's --json give it."""
    row, entry = line.row, line.entry
    return {
        "entry": entry.key if entry else "baseline",
        "engine": entry.engine if entry else None,
        "kind": entry.kind if entry else "baseline",
        "setting": entry.setting if entry else "baseline",
        "generator": entry.generator if entry else "",
        "language": row.language,
        "runs": row.runs,
        "examples": row.examples,
        "micro": {"mean": row.micro_mean, "sd": row.micro_sd, "by_run": list(row.micro_by_run)},
        "macro": {"mean": row.macro_mean, "sd": row.macro_sd, "by_run": list(row.macro_by_run)},
        "reasked": line.reasked,
        "unparsed": line.unparsed,
        "errors": line.errors,
    }


# --- CSV ---------------------------------------------------------------------------------------

ANSWER_HEADER = [
    "evaluation", "entry", "engine", "setting", "generator", "run", "example", "concept",
    "language", "source", "options", "chosen", "chosen_position", "attested", "correct",
    "reasked", "error", "raw_answer",
]  # fmt: skip
SUMMARY_HEADER = [
    "evaluation", "entry", "engine", "setting", "generator", "language", "runs", "examples",
    "micro_mean", "micro_sd", "macro_mean", "macro_sd", "micro_by_run", "macro_by_run",
    "reasked", "unparsed", "errors",
]  # fmt: skip


def _answer_rows(evaluation: LexicalEvaluation) -> Iterator[list[Any]]:
    examples = {e["id"]: e for e in evaluation.snapshot.get("examples", [])}
    concepts = evaluation.snapshot.get("concepts", {})
    by_key = {e.key: e for e in entries(evaluation)}
    for answer in _answers(evaluation).iterator(chunk_size=2000):
        example = examples[answer.example_id]
        concept = concepts[str(example["concept"])]
        labels = {v["id"]: v["label"] for v in concept["variations"]}
        entry = by_key.get(answer.entry_key)
        position = answer.chosen_position
        yield [
            evaluation.pk,
            answer.entry_key,
            entry.engine if entry else "",
            entry.setting if entry else "",
            entry.generator if entry else "",
            answer.run + 1,
            answer.example_id,
            concept["lemma"],
            concept["language"],
            example["source"],
            " | ".join(labels.get(v, str(v)) for v in answer.option_order),
            labels.get(answer.chosen_id, "") if answer.chosen_id else "",
            "" if position is None else position + 1,
            labels.get(example["variation"], ""),
            int(answer.correct),
            int(answer.reasked),
            answer.error,
            answer.raw_answer,
        ]


def answers_csv_response(evaluation: LexicalEvaluation) -> StreamingHttpResponse:
    """One line per answer (streamed: an evaluation may hold tens of thousands)."""
    lines = csv_lines(ANSWER_HEADER, _answer_rows(evaluation))
    return streamed_download(lines, f"lexical-evaluation-{evaluation.pk}-answers.csv")


def summary_rows(evaluation: LexicalEvaluation) -> list[list[Any]]:
    out = []
    for line in results(evaluation).summary:
        entry, row = line.entry, line.row
        out.append(
            [
                evaluation.pk,
                entry.key if entry else metrics.BASELINE,
                entry.engine if entry else "",
                entry.setting if entry else "baseline",
                entry.generator if entry else "",
                row.language,
                row.runs,
                row.examples,
                f"{row.micro_mean:.6f}",
                f"{row.micro_sd:.6f}",
                f"{row.macro_mean:.6f}",
                f"{row.macro_sd:.6f}",
                " ".join(f"{v:.6f}" for v in row.micro_by_run),
                " ".join(f"{v:.6f}" for v in row.macro_by_run),
                line.reasked,
                line.unparsed,
                line.errors,
            ]
        )
    return out


def summary_csv_response(evaluation: LexicalEvaluation) -> HttpResponse:
    text = csv_text(SUMMARY_HEADER, summary_rows(evaluation))
    return download(text, f"lexical-evaluation-{evaluation.pk}-summary.csv")


def latest_finished(user) -> list[LexicalEvaluation]:
    """The latest finished evaluation of each selection, for the cross-language Fig. 2."""
    latest: dict[int, LexicalEvaluation] = {}
    for evaluation in (
        evaluations_for_user(user).filter(status="finished").order_by("-finished_at", "-id")[:200]
    ):
        latest.setdefault(evaluation.selection_id, evaluation)
    return list(latest.values())


def bias_svg(evaluation: LexicalEvaluation, size: int) -> bytes:
    found = [b for b in results(evaluation).bias if b.size == size]
    return charts.position_bias_svg(size, found[0].series if found else [])


def human_reference(evaluation: LexicalEvaluation) -> HumanRow | None:
    """The "human (majority of N)" reference row: a selection study of the same selection,
    scored over this evaluation's examples (``None`` when no study has a complete one)."""
    example_ids = [e["id"] for e in evaluation.snapshot.get("examples", [])]
    return human_row(evaluation.selection, example_ids)
