"""Accuracy of lexical selection (seed 004 §4, Fig. 2, App. B.4). Pure Python + numpy.

Every answer is one :class:`Graded` record. From them:

1. per (entry, language, run): **micro** accuracy (share of examples answered correctly) and
   **macro** accuracy (the mean over concepts of each concept's accuracy, so a concept with many
   examples counts as much as one with few);
2. per (entry, language): mean ± sd of both over runs (sample sd, ``ddof=1``; 0 for one run),
   the ``μ±σ`` of Fig. 2;
3. per (entry, concept): accuracy pooled over runs;
4. position bias: for concepts shown with 2 and 3 options, how often each position was chosen
   (App. Figs. 5–6);
5. the frequency baseline: always the most frequent variation of the concept.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BASELINE",
    "ConceptRow",
    "Graded",
    "SummaryRow",
    "frequency_baseline",
    "per_concept",
    "position_bias",
    "run_accuracies",
    "summarise",
]

BASELINE = "frequency baseline"


@dataclass(frozen=True)
class Graded:
    entry: str
    run: int
    example: int
    concept: int
    language: str
    correct: bool
    position: int | None = None  # 0-based position of the chosen option; None: none chosen
    options: int = 0  # options shown (0: a translate engine, which sees none)


@dataclass(frozen=True)
class SummaryRow:
    entry: str
    language: str
    runs: int
    examples: int  # per run
    micro_mean: float
    micro_sd: float
    macro_mean: float
    macro_sd: float
    micro_by_run: tuple[float, ...]
    macro_by_run: tuple[float, ...]


@dataclass(frozen=True)
class ConceptRow:
    entry: str
    concept: int
    answers: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.answers if self.answers else 0.0


def _micro_macro(records: Sequence[Graded]) -> tuple[float, float]:
    micro = sum(r.correct for r in records) / len(records)
    by_concept: dict[int, list[bool]] = defaultdict(list)
    for r in records:
        by_concept[r.concept].append(r.correct)
    macro = float(np.mean([np.mean(v) for v in by_concept.values()]))
    return float(micro), macro


def run_accuracies(
    graded: Iterable[Graded],
) -> dict[tuple[str, str, int], tuple[float, float, int]]:
    """(entry, language, run) → (micro, macro, examples)."""
    groups: dict[tuple[str, str, int], list[Graded]] = defaultdict(list)
    for record in graded:
        groups[(record.entry, record.language, record.run)].append(record)
    return {key: (*_micro_macro(rows), len(rows)) for key, rows in groups.items()}


def _sd(values: Sequence[float]) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def summarise(graded: Iterable[Graded]) -> list[SummaryRow]:
    """One row per (entry, language), in the order entries first appear."""
    by_run = run_accuracies(graded)
    grouped: dict[tuple[str, str], list[tuple[int, float, float, int]]] = {}
    for (entry, language, run), (micro, macro, n) in by_run.items():
        grouped.setdefault((entry, language), []).append((run, micro, macro, n))
    rows = []
    for (entry, language), runs in grouped.items():
        runs.sort()
        micros = tuple(r[1] for r in runs)
        macros = tuple(r[2] for r in runs)
        rows.append(
            SummaryRow(
                entry=entry,
                language=language,
                runs=len(runs),
                examples=max(r[3] for r in runs),
                micro_mean=float(np.mean(micros)),
                micro_sd=_sd(micros),
                macro_mean=float(np.mean(macros)),
                macro_sd=_sd(macros),
                micro_by_run=micros,
                macro_by_run=macros,
            )
        )
    return rows


def per_concept(graded: Iterable[Graded]) -> list[ConceptRow]:
    """(entry, concept) accuracy over every run, in first-seen order."""
    counts: dict[tuple[str, int], list[int]] = {}
    for r in graded:
        cell = counts.setdefault((r.entry, r.concept), [0, 0])
        cell[0] += 1
        cell[1] += int(r.correct)
    return [ConceptRow(e, c, n, k) for (e, c), (n, k) in counts.items()]


def position_bias(
    graded: Iterable[Graded], sizes: Sequence[int] = (2, 3)
) -> dict[tuple[str, int], list[int]]:
    """(entry, options shown) → how many answers chose each position (0-based list index).

    Only answers that chose an option count; entries that saw no options (NMT) are absent.
    """
    counts: dict[tuple[str, int], Counter[int]] = defaultdict(Counter)
    for r in graded:
        if r.options in sizes and r.position is not None:
            counts[(r.entry, r.options)][r.position] += 1
    return {key: [c[i] for i in range(key[1])] for key, c in counts.items()}


def frequency_baseline(
    examples: Iterable[tuple[int, int, str, int]],
    variation_counts: Mapping[int, Sequence[tuple[int, int]]],
) -> list[Graded]:
    """Always the most frequent variation of the concept (ties: the one listed first).

    ``examples``: (example, concept, language, attested variation);
    ``variation_counts``: concept → [(variation, count), ...] in the concept's order.
    """
    most_frequent = {
        concept: max(pairs, key=lambda p: p[1])[0] if pairs else None
        for concept, pairs in variation_counts.items()
    }
    return [
        Graded(BASELINE, 0, example, concept, language, most_frequent.get(concept) == gold)
        for example, concept, language, gold in examples
    ]
