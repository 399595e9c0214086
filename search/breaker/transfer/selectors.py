"""Read queries for transfers: access, the matrix (seed 001 Tables 3–5) and the exports.

The matrix has one row per source run and one column per (translator, language); a cell is the
mean quality (0–100, mean over the QE engines) of the run's selected texts translated by that
translator into that language. The lowest cell of each column (the hardest texts for that
system) is marked, and so is a run's own target (the translator and language it was optimised
against: the diagonal of Tables 4 and 5).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Avg, Count, Q, QuerySet
from django.http import HttpResponse, StreamingHttpResponse

from core.access import visible_or_404
from core.http import download
from formats.spreadsheet import csv_text
from search.access import may_use_search
from search.breaker.methods import spec
from search.breaker.selection import lowest_per_column
from search.models import BreakerRun, BreakerTransfer, TransferResult

__all__ = [
    "Cell",
    "Matrix",
    "Row",
    "csv_response",
    "jsonl_response",
    "matrix",
    "result_record",
    "result_rows",
    "transfer_for_user",
    "transfers_for_user",
]


def transfers_for_user(user) -> QuerySet[BreakerTransfer]:
    """Staff only, like breaker runs (they spend the lab's money and show unpublished data)."""
    return BreakerTransfer.objects.all() if may_use_search(user) else BreakerTransfer.objects.none()


def transfer_for_user(user, pk: int) -> BreakerTransfer:
    """The one permission-checked accessor for transfers (pages, API and exports)."""
    rows = transfers_for_user(user).select_related("created_by")
    return visible_or_404(rows, pk, "No such transfer.")


@dataclass(frozen=True)
class Cell:
    mean: float | None  # None: no text scored yet (or every one failed)
    texts: int  # results with a quality
    errors: int  # results whose translation or QE failed
    lowest: bool  # the lowest mean of its column
    own: bool  # the run was optimised against this translator and language


@dataclass(frozen=True)
class Row:
    run: BreakerRun
    label: str
    cells: list[Cell]


@dataclass(frozen=True)
class Matrix:
    columns: list[tuple[str, str]]  # (translator, language)
    rows: list[Row]


def _runs(transfer: BreakerTransfer) -> list[BreakerRun]:
    return list(transfer.runs.order_by("pk"))


def matrix(transfer: BreakerTransfer) -> Matrix:
    """The transfer's matrix, aggregated from its results in one query."""
    columns = [(t, lang) for t in transfer.translators for lang in transfer.languages]
    aggregated = {
        (row["chain__run_id"], row["translator"], row["tgt_lang"]): row
        for row in TransferResult.objects.filter(transfer=transfer)
        .values("chain__run_id", "translator", "tgt_lang")
        .annotate(mean=Avg("quality"), texts=Count("quality"), errors=Count("pk", Q(quality=None)))
        .order_by()
    }
    runs = _runs(transfer)
    empty = {"mean": None, "texts": 0, "errors": 0}
    values = [[aggregated.get((r.pk, *c), empty)["mean"] for c in columns] for r in runs]
    lowest = lowest_per_column(values)
    rows = []
    for i, run in enumerate(runs):
        cells = []
        for j, (translator, lang) in enumerate(columns):
            found = aggregated.get((run.pk, translator, lang), empty)
            own = translator in run.targets and lang == run.tgt_lang
            cells.append(Cell(found["mean"], found["texts"], found["errors"], lowest[j] == i, own))
        rows.append(Row(run, spec(run.method).label, cells))
    return Matrix(columns, rows)


# --- Exports -------------------------------------------------------------------------------

CSV_HEADER = [
    "transfer", "run", "run_name", "method", "run_targets", "run_tgt_lang", "translator",
    "language", "mean_quality", "texts", "errors", "own_target", "lowest_in_column",
]  # fmt: skip


def _csv_rows(transfer: BreakerTransfer) -> Iterator[list[Any]]:
    table = matrix(transfer)
    for row in table.rows:
        for (translator, lang), cell in zip(table.columns, row.cells, strict=True):
            yield [
                transfer.pk, row.run.pk, row.run.name, row.run.method, " ".join(row.run.targets),
                row.run.tgt_lang, translator, lang,
                "" if cell.mean is None else f"{cell.mean:.4f}", cell.texts, cell.errors,
                int(cell.own), int(cell.lowest),
            ]  # fmt: skip


def csv_response(transfer: BreakerTransfer) -> HttpResponse:
    """The matrix in long form: one line per (run, translator, language)."""
    return download(
        csv_text(CSV_HEADER, _csv_rows(transfer)), f"breaker-transfer-{transfer.pk}.csv"
    )


def result_record(result: TransferResult) -> dict[str, Any]:
    """One translation of one selected text, as the JSONL export and the API give it."""
    run = result.chain.run
    return {
        "transfer": result.transfer_id,
        "run": run.pk,
        "run_name": run.name,
        "method": run.method,
        "chain": result.chain.index,
        "src_lang": run.src_lang,
        "translator": result.translator,
        "tgt_lang": result.tgt_lang,
        "own_target": result.translator in run.targets and result.tgt_lang == run.tgt_lang,
        "source": result.source,
        "translation": result.translation,
        "qe": result.qe,
        "quality": result.quality,
        "error": result.error,
    }


def result_rows(transfer: BreakerTransfer) -> QuerySet[TransferResult]:
    return (
        TransferResult.objects.filter(transfer=transfer)
        .select_related("chain__run")
        .order_by("tgt_lang", "translator", "chain__run_id", "chain__index")
    )


def _stream(transfer: BreakerTransfer) -> Iterator[str]:
    for result in result_rows(transfer).iterator(chunk_size=1000):
        yield json.dumps(result_record(result), ensure_ascii=False) + "\n"


def jsonl_response(transfer: BreakerTransfer) -> StreamingHttpResponse:
    response = StreamingHttpResponse(_stream(transfer), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="breaker-transfer-{transfer.pk}.jsonl"'
    return response
