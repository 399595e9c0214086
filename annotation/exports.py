"""Campaign exports: JSONL, CSV and Google-MQM TSV, per annotation or aggregated per item.

Every export is a generator of text chunks, so the command writes a file and the view streams an
HTTP response without ever holding the campaign in memory: rows come from the database through
``QuerySet.iterator(chunk_size=...)`` (a server-side cursor on PostgreSQL) and the number of
queries does not depend on the number of annotations (aggregates: one query per chunk of items).

Identity: annotators appear only as their stable pseudonym (``Annotator.pseudonym``); names,
usernames and emails never leave the platform. Provenance: every row carries the campaign name,
the item's ``origin``/``origin_ref`` and its free ``meta``.

Shapes:

* ``jsonl`` per annotation — the WMT ESA release's keys (``langs``, ``doc_id``, ``line_id`` and
  ``domain`` where the item's ``meta`` has them, ``system``, ``src``, ``tgt``, ``annotator``,
  ``esa_score``, ``esa_spans`` with ``start_i``/``end_i``/``severity`` and ``"missing"`` for
  omissions; ``"side": "source"`` on an MQM span over the source) plus the protocol's answer,
  the computed score, time and QC flags;
* ``csv`` per annotation — the same fields, flat, with JSON in the ``spans``/``meta`` cells;
* ``mqm-tsv`` — the columns of Google's public MQM data (``system doc doc_id seg_id rater source
  target category severity comment``), one row per error span with the span wrapped in
  ``<v>…</v>`` in the target, or in the source for a source-side span, and a ``No-error`` row
  for an annotation without spans; labels as Google spells them (``Style/Awkward``);
  ``doc_id`` is the segment's 1-based place within its document, as in Google's files; MQM
  campaigns only;
* ``items-jsonl`` — the campaign's items in the JSONL the import reads (``source``,
  ``doc_id``, ``seg_id``, ``target``, ``choices``, ``expected``, ``prefill_spans``, ``meta``, ...;
  empty fields left out), so importing the file rebuilds the campaign's items; generated
  attention checks are left out (they name their original item by id);
* ``--aggregate`` (jsonl or csv) — one row per regular item: number of annotations, mean / std
  (population) / min / max score, the majority answer (ties written ``tie``, see
  ``agreement.majority``; multi-select: the options chosen by more than half, joined by ``|``)
  and, for choices, the item's options (``choices``) and pairwise agreement (share of annotator
  pairs giving the same answer; for multi-select the same set of options), all over the
  judgments of annotators who
  pass quality control (``selectors.item_results``); ``excluded`` maps the others to their
  verdict (``fail`` or ``pending``);
* scored protocols that allow it (ESA, MQM, ESA+MQM) add ``non_scorable`` and
  ``non_scorable_reason`` per annotation and ``n_non_scorable`` per item (a flagged answer has
  no score and is left out of the means; the MQM TSV skips it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Min

from annotation import ordering, protocols, qc, selectors
from annotation.models import Annotation, Campaign, Enrollment, Item
from annotation.protocols import mqm
from formats.jsonl import sorted_keys
from formats.spreadsheet import csv_lines, tsv_line

ITEMS_FORMAT = "items-jsonl"
FORMATS = ("jsonl", "csv", "mqm-tsv", ITEMS_FORMAT)
CONTENT_TYPES = {
    "jsonl": "application/jsonl; charset=utf-8",
    ITEMS_FORMAT: "application/jsonl; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "mqm-tsv": "text/tab-separated-values; charset=utf-8",
}
MQM_TSV_COLUMNS = (
    "system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity",
    "comment",
)  # fmt: skip
CSV_COLUMNS = (
    "campaign", "protocol", "item_id", "kind", "doc_id", "seg_id", "src_lang", "tgt_lang",
    "system", "source", "target", "question", "annotator", "score", "mqm_score", "n_spans",
    "spans", "selected", "confidence", "comment", "time_spent_seconds", "submitted_at",
    "revision", "qc_verdict", "qc_too_fast", "qc_check", "origin", "origin_ref", "meta",
)  # fmt: skip
AGGREGATE_COLUMNS = (
    "campaign", "protocol", "item_id", "kind", "doc_id", "seg_id", "src_lang", "tgt_lang",
    "system", "source", "target", "question", "choices", "n_annotations", "annotators",
    "mean_score", "score_std", "min_score", "max_score", "mean_mqm_score", "majority",
    "majority_votes", "tie", "item_agreement", "excluded", "origin", "origin_ref", "meta",
)  # fmt: skip
ORDER_COLUMNS = ("item_order_seed", "item_order_position")
"""Per-annotation columns of campaigns that shuffle items per annotator."""
DEFAULT_CHUNK_SIZE = 2000


class ExportError(ValueError):
    """An export that cannot be produced as asked (unknown format, wrong protocol)."""


@dataclass(frozen=True)
class ExportRequest:
    campaign: Campaign
    format: str
    aggregate: bool = False

    def validate(self) -> None:
        if self.format not in FORMATS:
            raise ExportError(f"unknown format {self.format!r}; use one of {', '.join(FORMATS)}")
        if self.format == ITEMS_FORMAT and self.aggregate:
            raise ExportError("items-jsonl already has one line per item; it has no aggregate")
        if self.format == "mqm-tsv":
            if self.aggregate:
                raise ExportError("mqm-tsv has one row per error span; it cannot be aggregated")
            offered = {fmt for _, fmt, _ in self.campaign.get_protocol().extra_export_formats}
            if self.format not in offered:
                raise ExportError("mqm-tsv is for MQM campaigns only")

    @property
    def filename(self) -> str:
        if self.format == ITEMS_FORMAT:
            return f"{self.campaign.slug}-campaign.jsonl"
        suffix = {"jsonl": "jsonl", "csv": "csv", "mqm-tsv": "tsv"}[self.format]
        kind = "items" if self.aggregate else "annotations"
        return f"{self.campaign.slug}-{kind}.{suffix}"

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES[self.format]


def stream_export(
    campaign: Campaign,
    fmt: str,
    *,
    aggregate: bool = False,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    item_ids: Iterable[int] | None = None,
    qc_passed_only: bool = False,
) -> Iterator[str]:
    """Text chunks of one export; raises :class:`ExportError` before yielding if it cannot run.

    The public entry point other apps use too (challenge sets export the annotations behind a
    frozen version): ``item_ids`` narrows per-annotation exports to those items, and
    ``qc_passed_only`` to annotators whose QC verdict is ``pass``.
    """
    request = ExportRequest(campaign, fmt, aggregate)
    request.validate()
    narrow = _Narrowing(campaign, item_ids, qc_passed_only)
    if fmt == ITEMS_FORMAT:
        return (
            json.dumps(row, ensure_ascii=False) + "\n" for row in item_rows(campaign, chunk_size)
        )
    if fmt == "mqm-tsv":
        return _mqm_tsv(campaign, chunk_size, narrow)
    rows = (
        aggregate_rows(campaign, chunk_size)
        if aggregate
        else annotation_rows(campaign, chunk_size, narrow)
    )
    if fmt == "jsonl":
        return (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    protocol = campaign.get_protocol()
    if aggregate:
        flag = ("n_non_scorable",) if protocol.allows_non_scorable else ()
        columns = AGGREGATE_COLUMNS + flag
    else:
        columns = CSV_COLUMNS + protocol.extra_csv_columns
        if campaign.shuffle_items:
            columns += ORDER_COLUMNS
    return _csv(rows, columns, protocol)


# --- rows ------------------------------------------------------------------------------------


def _submitted(campaign: Campaign):
    return Annotation.objects.filter(campaign=campaign, status=Annotation.Status.SUBMITTED)


class _Narrowing:
    """Which annotations a per-annotation export keeps (every one, unless asked otherwise)."""

    def __init__(self, campaign: Campaign, item_ids, qc_passed_only: bool):
        self.item_ids = None if item_ids is None else sorted(set(item_ids))
        self.qc_passed_only = qc_passed_only
        self.campaign = campaign

    def apply(self, queryset, verdicts: dict[int, str] | None = None):
        if self.item_ids is not None:
            queryset = queryset.filter(item_id__in=self.item_ids)
        if self.qc_passed_only:
            verdicts = verdicts if verdicts is not None else annotator_verdicts(self.campaign)
            passed = [aid for aid, verdict in verdicts.items() if verdict == qc.PASS]
            queryset = queryset.filter(annotator_id__in=passed)
        return queryset


def _langs(item: Item) -> str:
    return f"{item.src_lang}-{item.tgt_lang}" if item.src_lang or item.tgt_lang else ""


def annotator_verdicts(campaign: Campaign) -> dict[int, str]:
    """QC verdict per annotator id, computed once per export (not once per row)."""
    return qc.verdicts_for_campaign(campaign)


def _qc_flags(annotation: Annotation, verdicts: dict[int, str]) -> dict[str, Any]:
    flags = qc.annotation_flags(annotation)
    return {
        "verdict": verdicts.get(annotation.annotator_id, ""),
        "too_fast": flags["too_fast"],
        "check": flags["check"],
    }


def annotation_rows(
    campaign: Campaign, chunk_size: int = DEFAULT_CHUNK_SIZE, narrow: _Narrowing | None = None
) -> Iterator[dict[str, Any]]:
    """One dict per submitted annotation, in submission-id order."""
    protocol = campaign.get_protocol()
    verdicts = annotator_verdicts(campaign)
    submitted = _submitted(campaign)
    if narrow is not None:
        submitted = narrow.apply(submitted, verdicts)
    queryset = (
        submitted.select_related("item", "annotator").only(*_ANNOTATION_FIELDS).order_by("id")
    )
    orders = _ItemOrders(campaign) if campaign.shuffle_items else None
    for annotation in queryset.iterator(chunk_size=chunk_size):
        annotation.campaign = campaign  # the one instance, not a query per row
        row = _annotation_row(annotation, campaign, protocol, verdicts)
        if orders is not None:
            row |= orders.columns(annotation.annotator_id, annotation.item_id)
        yield row


class _ItemOrders:
    """Each annotator's recorded item order: the stored seed, and the item's 1-based place in
    the permutation of the campaign's non-tutorial items (``annotation/ordering.py``), which is
    the order the claim query offered them in (items others had filled were skipped)."""

    def __init__(self, campaign: Campaign):
        self.seeds = dict(
            Enrollment.objects.filter(campaign=campaign).values_list(
                "annotator_id", "item_order_seed"
            )
        )
        self.items = list(
            campaign.items.exclude(kind=Item.Kind.TUTORIAL).values_list("id", "position")
        )
        self.places: dict[int, dict[int, int]] = {}

    def columns(self, annotator_id: int, item_id: int) -> dict[str, Any]:
        seed = self.seeds.get(annotator_id)
        if seed is None:
            return {"item_order_seed": None, "item_order_position": None}
        if annotator_id not in self.places:
            order = ordering.ordered(self.items, seed)
            self.places[annotator_id] = {pk: n for n, pk in enumerate(order, start=1)}
        return {
            "item_order_seed": seed,
            "item_order_position": self.places[annotator_id].get(item_id),
        }


_ANNOTATION_FIELDS = (
    "id", "answer", "score", "mqm_score", "option_order", "time_spent_seconds", "submitted_at",
    "revision", "status", "campaign_id", "annotator_id", "item_id",
    "annotator__pseudonym",
    "item__doc_id", "item__seg_id", "item__src_lang", "item__tgt_lang", "item__source",
    "item__target", "item__system", "item__kind", "item__expected", "item__question",
    "item__choices", "item__questions", "item__origin", "item__origin_ref", "item__meta",
)  # fmt: skip


def _annotation_row(
    annotation: Annotation,
    campaign: Campaign,
    protocol: protocols.Protocol,
    verdicts: dict[int, str],
) -> dict[str, Any]:
    item = annotation.item
    row: dict[str, Any] = {
        "campaign": campaign.name,
        "protocol": campaign.protocol,
        "item_id": item.pk,
        "kind": item.kind,
        "langs": _langs(item),
        "src_lang": item.src_lang,
        "tgt_lang": item.tgt_lang,
        "doc_id": item.doc_id,
        "seg_id": item.seg_id,
        **_wmt_ids(item),
        "system": item.system,
        "src": item.source,
        "tgt": item.target,
        "annotator": annotation.annotator.pseudonym,
    }
    row |= protocol.annotation_columns(campaign, item, annotation)
    if protocol.allows_non_scorable:
        row |= protocols.non_scorable_columns(annotation.answer)
    row |= {
        "time_spent_seconds": round(annotation.time_spent_seconds, 3),
        "submitted_at": annotation.submitted_at.isoformat() if annotation.submitted_at else None,
        "revision": annotation.revision,
        "qc": _qc_flags(annotation, verdicts),
        "origin": item.origin,
        "origin_ref": item.origin_ref,
        "meta": item.meta,
    }
    return row


WMT_ITEM_KEYS = ("line_id", "domain")


def _wmt_ids(item: Item) -> dict[str, Any]:
    """The WMT release's ``line_id`` and ``domain``, where the item's import kept them in meta."""
    meta = item.meta or {}
    return {key: meta[key] for key in WMT_ITEM_KEYS if meta.get(key) not in (None, "")}


def _mean_std(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return round(mean, 6), round(std, 6)


def aggregate_rows(
    campaign: Campaign, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> Iterator[dict[str, Any]]:
    """One dict per regular item (attention checks and tutorials are QC, not data).

    Built from ``selectors.item_results``, so the per-item export counts exactly what producers
    count: judgments of annotators who pass QC. ``excluded`` names the others with their verdict.
    """
    protocol = campaign.get_protocol()
    for result in selectors.item_results(campaign, chunk_size=chunk_size):
        counted = result.counted
        scores = [j.score for j in counted if j.score is not None]
        mean, std = _mean_std(scores)
        row: dict[str, Any] = {
            "campaign": campaign.name,
            "protocol": campaign.protocol,
            "item_id": result.item_id,
            "kind": Item.Kind.REGULAR.value,
            "doc_id": result.doc_id,
            "seg_id": result.seg_id,
            "src_lang": result.src_lang,
            "tgt_lang": result.tgt_lang,
            "system": result.system,
            "source": result.source,
            "target": result.target,
            "question": result.question,
            "choices": list(result.choices),
            "n_annotations": len(counted),
            "annotators": [j.annotator for j in counted],
            "mean_score": mean,
            "score_std": std,
            "min_score": min(scores) if scores else None,
            "max_score": max(scores) if scores else None,
            "mean_mqm_score": None,
            "majority": None,
            "majority_votes": None,
            "tie": None,
            "item_agreement": None,
        }
        row |= result.extra
        if protocol.allows_non_scorable:
            row["n_non_scorable"] = result.n_non_scorable
        row |= {
            "excluded": result.excluded,
            "origin": result.origin,
            "origin_ref": result.origin_ref,
            "meta": result.meta,
        }
        yield row


def item_rows(campaign: Campaign, chunk_size: int = DEFAULT_CHUNK_SIZE) -> Iterator[dict[str, Any]]:
    """The campaign's items as the import reads them (one JSONL line each), in item order.

    Importing the file makes a campaign with the same items. Generated attention checks are
    left out: they name their original item by id, which a new campaign does not have (generate
    them again there).
    """
    queryset = campaign.items.only(*_ITEM_FIELDS).order_by("position", "id")
    for item in queryset.iterator(chunk_size=chunk_size):
        if isinstance(item.expected, dict) and item.expected.get("type") == "corrupted":
            continue
        row: dict[str, Any] = {"source": item.source}
        for field in _ITEM_FIELDS[1:]:
            value = getattr(item, field)
            if value not in ("", None, [], {}) and not (field == "kind" and value == "regular"):
                row[field] = sorted_keys(value)
        yield row


_ITEM_FIELDS = (
    "source", "doc_id", "seg_id", "src_lang", "tgt_lang", "target", "system", "kind", "question",
    "choices", "questions", "expected", "prefill_spans", "origin", "origin_ref", "meta",
)  # fmt: skip


# --- writers ---------------------------------------------------------------------------------


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return value


def _flatten(row: dict[str, Any], protocol: protocols.Protocol) -> dict[str, Any]:
    """CSV view of an annotation row: spans and answers as JSON cells, QC flags as columns."""
    flat = dict(row)
    flags = flat.pop("qc", None)
    if flags is not None:
        flat["qc_verdict"] = flags["verdict"]
        flat["qc_too_fast"] = flags["too_fast"]
        flat["qc_check"] = flags["check"]
    protocol.flatten(flat)
    flat.setdefault("source", flat.get("src"))
    flat.setdefault("target", flat.get("tgt"))
    return flat


def _csv(
    rows: Iterable[dict[str, Any]], columns: tuple[str, ...], protocol: protocols.Protocol
) -> Iterator[str]:
    cells = (
        [_cell(flat.get(c)) for c in columns] for flat in (_flatten(r, protocol) for r in rows)
    )
    return csv_lines(columns, cells, lineterminator="\n")


def segment_positions(campaign: Campaign) -> dict[tuple[str, str], int]:
    """Google's ``doc_id``: each segment's 1-based place within its document.

    Segments (``seg_id``) of a document are numbered in the campaign's item order; the systems'
    translations of one segment share its number. Only regular items are numbered, as only they
    are exported.
    """
    first = (
        Item.objects.filter(campaign=campaign, kind=Item.Kind.REGULAR)
        .values("doc_id", "seg_id")
        .annotate(first=Min("position"), first_id=Min("id"))
        .order_by("first", "first_id")
    )
    counters: dict[str, int] = {}
    positions = {}
    for row in first.iterator():
        counters[row["doc_id"]] = counters.get(row["doc_id"], 0) + 1
        positions[(row["doc_id"], row["seg_id"])] = counters[row["doc_id"]]
    return positions


def _doc_position(item: Item, positions: dict[tuple[str, str], int]) -> int | str:
    """An item read from Google's file keeps its position (a file may be a sample of a talk)."""
    kept = (item.meta or {}).get("doc_position")
    if isinstance(kept, int) and not isinstance(kept, bool) and kept > 0:
        return kept
    return positions.get((item.doc_id, item.seg_id), "")


_TSV_FIELDS = (
    "id", "answer", "item__doc_id", "item__seg_id", "item__source", "item__target",
    "item__system", "item__meta", "annotator__pseudonym",
)  # fmt: skip


def _mqm_tsv(campaign: Campaign, chunk_size: int, narrow: _Narrowing) -> Iterator[str]:
    positions = segment_positions(campaign)
    queryset = (
        narrow.apply(_submitted(campaign))
        .filter(item__kind=Item.Kind.REGULAR)
        .select_related("item", "annotator")
        .only(*_TSV_FIELDS)
        .order_by("item__position", "item_id", "id")
    )
    yield tsv_line(MQM_TSV_COLUMNS)
    for annotation in queryset.iterator(chunk_size=chunk_size):
        item = annotation.item
        base = [item.system, item.doc_id, _doc_position(item, positions), item.seg_id,
                annotation.annotator.pseudonym]  # fmt: skip
        if protocols.is_non_scorable(annotation.answer):
            continue  # not "No-error": nothing was judged (the JSONL/CSV exports carry the flag)
        spans = (annotation.answer or {}).get("spans", [])
        for fields in mqm.google_tsv_rows(base, item.source, item.target, spans):
            # Google's files are unquoted TSV: tabs and line breaks in a text become spaces.
            yield tsv_line(fields)
