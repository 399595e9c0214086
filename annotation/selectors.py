"""Read queries of the annotation app (pages, API and other apps read through these)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Prefetch, Q, QuerySet, Sum, Value
from django.db.models.functions import Least, Length
from django.db.models.lookups import Exact, GreaterThan, LessThan

from annotation import agreement, protocols, qc
from annotation.models import Annotation, Annotator, Assignment, Campaign, Enrollment, Item

CONTEXT_SEGMENTS = 2


def document_context(item: Item, size: int = CONTEXT_SEGMENTS) -> tuple[list[Item], list[Item]]:
    """Up to ``size`` segments of the item's document before and after it: regular items of the
    same document *and the same system* (the source's own segments where items name no system),
    in segment-id order.

    A campaign often holds several systems' translations of one document (Google's MQM TSV:
    one item per system × segment), so the document's other items include other translations of
    the very same sentence: those are no context. Segment ids are compared as numbers where
    they are (``2`` before ``10``): shorter ids first, then by text. Items with the item's own
    segment id are left out, so an attention check made from a segment never shows that segment
    (its uncorrupted twin) as its context, and has the same context as the segment it copies.
    """
    if not item.doc_id:
        return [], []
    same_doc = (
        Item.objects.filter(
            campaign_id=item.campaign_id,
            doc_id=item.doc_id,
            system=item.system,
            kind=Item.Kind.REGULAR,
        )
        .exclude(seg_id=item.seg_id)
        .only("source", "target", "seg_id", "meta")
    )
    seg_length, length = Length("seg_id"), len(item.seg_id)
    same_length: Exact[int] = Exact(seg_length, length)
    earlier = Q(LessThan(seg_length, length)) | (Q(same_length) & Q(seg_id__lt=item.seg_id))
    later = Q(GreaterThan(seg_length, length)) | (Q(same_length) & Q(seg_id__gt=item.seg_id))
    before = list(
        same_doc.filter(earlier).order_by(seg_length.desc(), "-seg_id", "-position", "-id")[:size]
    )
    after = list(
        same_doc.filter(later).order_by(seg_length.asc(), "seg_id", "position", "id")[:size]
    )
    return before[::-1], after


def my_history(annotator: Annotator, campaign: Campaign) -> list[int]:
    """Item ids the annotator has claimed in a campaign, in the order they got them."""
    return list(
        Assignment.objects.filter(annotator=annotator, campaign=campaign)
        .exclude(status=Assignment.Status.EXPIRED)
        .order_by("claimed_at", "id")
        .values_list("item_id", flat=True)
    )


def neighbours_in_history(annotator: Annotator, item: Item) -> tuple[int | None, int | None]:
    """(previous, next) item ids in the annotator's own history of the item's campaign."""
    history = my_history(annotator, item.campaign)
    if item.pk not in history:
        return None, None
    index = history.index(item.pk)
    previous = history[index - 1] if index > 0 else None
    following = history[index + 1] if index + 1 < len(history) else None
    return previous, following


@dataclass(frozen=True)
class ItemNumber:
    """An item's number in one annotator's own sequence (:func:`my_item_numbers`)."""

    number: int
    tutorial: bool

    @property
    def label(self) -> str:
        return f"Tutorial {self.number}" if self.tutorial else str(self.number)


def my_item_numbers(annotator: Annotator, campaign: Campaign) -> dict[int, ItemNumber]:
    """Item id → the annotator's own number for it, in the order they first got the items
    (their annotation row is created with the first claim and kept, so a number never changes).

    Tutorials are numbered apart ("Tutorial 2"); every other item is numbered 1, 2, ...,
    attention checks among them, so that a number tells nothing of what an item is: the
    annotator's pages show these numbers, never an item's ids (ADR 0050).
    """
    rows = (
        Annotation.objects.filter(annotator=annotator, campaign=campaign)
        .order_by("id")
        .values_list("item_id", "item__kind")
    )
    numbers: dict[int, ItemNumber] = {}
    counts = {True: 0, False: 0}
    for item_id, kind in rows:
        tutorial = kind == Item.Kind.TUTORIAL
        counts[tutorial] += 1
        numbers[item_id] = ItemNumber(counts[tutorial], tutorial)
    return numbers


@dataclass
class TaskRow:
    campaign: Campaign
    enrollment: Enrollment
    submitted: int
    drafts: int
    quota: int | None

    @property
    def can_annotate(self) -> bool:
        return self.enrollment.can_annotate and self.campaign.is_open

    @property
    def percent(self) -> int | None:
        if not self.quota:
            return None
        return min(100, round(100 * self.submitted / self.quota))


def task_rows(annotator: Annotator) -> list[TaskRow]:
    """The annotator's campaigns with their own progress (one query for the counts).

    Tutorials are practice, not part of the work: they count in neither the done count
    (``submitted``, ``drafts``) nor the total (``quota``), here as on the annotate page's
    "item N of M" (tutorials show "tutorial k of T" there instead)."""
    enrollments = list(
        Enrollment.objects.filter(annotator=annotator)
        .select_related("campaign")
        .order_by("-created_at")
    )
    counts = {
        row["campaign_id"]: row
        for row in Annotation.objects.filter(annotator=annotator)
        .exclude(item__kind=Item.Kind.TUTORIAL)
        .values("campaign_id")
        .annotate(
            submitted=Count("id", filter=Q(status=Annotation.Status.SUBMITTED)),
            drafts=Count("id", filter=Q(status=Annotation.Status.DRAFT)),
        )
    }
    rows = []
    for enrollment in enrollments:
        campaign = enrollment.campaign
        row = counts.get(campaign.pk, {})
        quota = campaign.max_items_per_annotator or campaign_item_count(campaign)
        rows.append(
            TaskRow(campaign, enrollment, row.get("submitted", 0), row.get("drafts", 0), quota)
        )
    return rows


def campaign_item_count(campaign: Campaign) -> int:
    """Items an annotator can get at most, tutorials aside: regular ones plus attention checks
    (counted in, so that the total does not tell how many of the items are checks)."""
    return campaign.items.exclude(kind=Item.Kind.TUTORIAL).count()


def item_kind_counts(campaign: Campaign) -> dict[str, int]:
    """Items of each kind (every kind present, zeros included), in one query."""
    counts = dict(campaign.items.values_list("kind").annotate(n=Count("id")).order_by())
    return {kind: counts.get(kind, 0) for kind in Item.Kind.values}


def describe_item_counts(campaign: Campaign) -> str:
    """'20 items (+ 4 attention checks, 2 tutorial items)': the same count as every campaign
    page (regular items), with the other kinds named apart rather than summed in."""
    counts = item_kind_counts(campaign)
    others = [
        f"{counts[Item.Kind.ATTENTION_CHECK]} attention check"
        + ("s" if counts[Item.Kind.ATTENTION_CHECK] != 1 else ""),
        f"{counts[Item.Kind.TUTORIAL]} tutorial item"
        + ("s" if counts[Item.Kind.TUTORIAL] != 1 else ""),
    ]
    others = [text for text in others if not text.startswith("0 ")]
    regular = counts[Item.Kind.REGULAR]
    text = f"{regular} item{'s' if regular != 1 else ''}"
    return f"{text} (+ {', '.join(others)})" if others else text


def exclusive_with(campaign: Campaign) -> list[Campaign]:
    """The other campaigns of ``campaign``'s exclusive group (none without a group)."""
    if not campaign.exclusive_group:
        return []
    return list(
        Campaign.objects.filter(exclusive_group=campaign.exclusive_group)
        .exclude(pk=campaign.pk)
        .only("name")
        .order_by("name")
    )


def campaign_rows() -> QuerySet[Campaign]:
    """Campaigns with item, annotator and submission counts for the admin list."""
    return Campaign.objects.annotate(
        n_items=Count("items", filter=Q(items__kind=Item.Kind.REGULAR), distinct=True),
        n_enrollments=Count("enrollments", distinct=True),
        n_pending=Count(
            "enrollments",
            filter=Q(enrollments__status=Enrollment.Status.PENDING),
            distinct=True,
        ),
    ).order_by("-created_at")


def enrollment_rows(campaign: Campaign) -> list[dict]:
    """Annotators of a campaign with their counts, for the admin's campaign page."""
    enrollments = list(campaign.enrollments.select_related("annotator").order_by("created_at"))
    counts = {
        row["annotator_id"]: row
        for row in Annotation.objects.filter(campaign=campaign)
        .values("annotator_id")
        .annotate(
            submitted=Count("id", filter=Q(status=Annotation.Status.SUBMITTED)),
            drafts=Count("id", filter=Q(status=Annotation.Status.DRAFT)),
        )
    }
    return [
        {
            "enrollment": e,
            "submitted": counts.get(e.annotator_id, {}).get("submitted", 0),
            "drafts": counts.get(e.annotator_id, {}).get("drafts", 0),
        }
        for e in enrollments
    ]


OVER_OVERLAP_SHOWN = 20


def over_overlap_items(campaign: Campaign, limit: int = OVER_OVERLAP_SHOWN) -> list[Item]:
    """Regular items with more submitted judgments than the campaign's overlap (at most
    ``limit``, in item order). It happens when a claim lapsed, someone else took its slot and
    both submitted: neither finished answer is refused, so both are kept and the organisers see
    the item flagged here (ADR 0049)."""
    return list(
        campaign.items.filter(kind=Item.Kind.REGULAR, completed_count__gt=campaign.overlap)
        .order_by("position", "id")
        .only("doc_id", "seg_id", "system", "completed_count")[:limit]
    )


def campaign_progress(campaign: Campaign) -> dict[str, int]:
    """Regular items done (reached overlap), annotation slots filled and items judged more
    often than the overlap (:func:`over_overlap_items`)."""
    regular = campaign.items.filter(kind=Item.Kind.REGULAR)
    total = regular.count()
    done = regular.filter(completed_count__gte=campaign.overlap).count()
    over = regular.filter(completed_count__gt=campaign.overlap).count()
    # At most ``overlap`` judgments of an item fill its slots: one kept above it (ADR 0049)
    # is not a slot of another item.
    filled = regular.aggregate(n=Sum(Least("completed_count", Value(campaign.overlap)), default=0))[
        "n"
    ]
    return {
        "items": total,
        "items_done": done,
        "slots": total * campaign.overlap,
        "slots_done": filled,
        "over_overlap": over,
    }


# --- results for producers -------------------------------------------------------------------


@dataclass(frozen=True)
class Judgment:
    """One submitted annotation behind an item's result, with its annotator's QC verdict."""

    annotator: str
    verdict: str
    score: float | None
    answer: dict[str, Any]

    @property
    def counted(self) -> bool:
        return self.verdict == qc.PASS

    @property
    def non_scorable(self) -> bool:
        """The annotator flagged the item non-scorable (its ``score`` is ``None``)."""
        return protocols.is_non_scorable(self.answer)


@dataclass(frozen=True)
class ItemResult:
    """The human result of one regular item, as other apps read it.

    Only judgments of annotators who pass quality control count (``qc.verdict_for``, the verdict
    the dashboard shows): ``n_judgments``, ``n_scored``, ``mean_score``, ``agreement`` and
    ``majority`` are computed over them; ``judgments`` lists every submitted annotation with its
    verdict, so a reader can see who was left out and why (``fail`` or still ``pending``).

    ``mean_score`` is the mean 0–100 score (higher is better), computed by the campaign's
    protocol exactly as the per-item export does (MQM re-scored with the campaign's current
    weights; rounded to 6 decimals); ``None`` when no counted judgment has a score.
    ``agreement`` is the item's 0–1 agreement (choices: share of agreeing pairs; scores:
    1 − mean pairwise difference / 100), ``None`` under two counted judgments. ``majority`` is
    the majority answer of a choice item (``"tie"`` when tied, ``None`` for scores).
    ``complete`` says the item has all its ``overlap`` submissions (``completed_count >=
    overlap``, as :func:`campaign_progress` counts ``items_done``); ``validated`` that it has
    ``overlap`` counted judgments.
    """

    item_id: int
    system: str
    origin: str
    origin_ref: str
    doc_id: str
    seg_id: str
    src_lang: str
    tgt_lang: str
    source: str
    target: str
    n_submitted: int
    n_scored: int
    mean_score: float | None
    complete: bool
    n_judgments: int = 0
    agreement: float | None = None
    majority: str | None = None
    overlap: int = 1
    judgments: tuple[Judgment, ...] = ()
    question: str = ""
    choices: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    n_non_scorable: int = 0
    """Counted judgments that flag the item non-scorable (they have no score)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The protocol's per-item export columns over the counted judgments (MQM mean, majority)."""

    @property
    def validated(self) -> bool:
        return self.n_judgments >= self.overlap

    @property
    def verdicts(self) -> dict[str, str]:
        """QC verdict per annotator pseudonym, for every submitted judgment."""
        return {j.annotator: j.verdict for j in self.judgments}

    @property
    def counted(self) -> list[Judgment]:
        return [j for j in self.judgments if j.counted]

    @property
    def excluded(self) -> dict[str, str]:
        """Annotators whose judgments were left out, with their verdict."""
        return {j.annotator: j.verdict for j in self.judgments if not j.counted}


def item_results(
    campaign: Campaign,
    *,
    origin: str | None = None,
    origin_ref_prefix: str | None = None,
    chunk_size: int = 2000,
) -> Iterator[ItemResult]:
    """Per-item results of a campaign's regular items, in the campaign's item order.

    The one way producers (search, difficulty, lexical, challenge sets) and the per-item export
    read human judgments: they never query annotation tables. Attention checks and tutorials are
    quality control, not results, and are left out; so are judgments of annotators whose QC
    verdict is not ``pass`` (see :class:`ItemResult`). ``origin`` / ``origin_ref_prefix`` narrow
    to a producer's items (``origin_ref__startswith``). Verdicts cost one query per annotator
    (once per call); items stream in chunks, each chunk's submitted annotations in one query.
    """
    protocol = campaign.get_protocol()
    verdicts = qc.verdicts_for_campaign(campaign)
    items = Item.objects.filter(campaign=campaign, kind=Item.Kind.REGULAR)
    if origin is not None:
        items = items.filter(origin=origin)
    if origin_ref_prefix is not None:
        items = items.filter(origin_ref__startswith=origin_ref_prefix)
    items = (
        items.order_by("position", "id")
        .only(*_RESULT_FIELDS)
        .prefetch_related(
            Prefetch(
                "annotations",
                queryset=Annotation.objects.filter(status=Annotation.Status.SUBMITTED)
                .select_related("annotator")
                .only("id", "item_id", "answer", "score", "annotator_id", "annotator__pseudonym")
                .order_by("id"),
                to_attr="submitted",
            )
        )
    )
    for item in items.iterator(chunk_size=chunk_size):
        yield _result(campaign, protocol, item, verdicts)


def _result(campaign: Campaign, protocol, item: Item, verdicts: dict[int, str]) -> ItemResult:
    judgments = tuple(
        Judgment(
            annotator=a.annotator.pseudonym,
            verdict=verdicts.get(a.annotator_id, qc.PENDING),
            score=protocol.score(campaign, a.answer or {}, a.score),
            answer=a.answer or {},
        )
        for a in item.submitted  # type: ignore[attr-defined]  # a Prefetch to_attr
    )
    counted = [j for j in judgments if j.counted]
    scores = [j.score for j in counted if j.score is not None]
    extra = protocol.aggregate_columns(campaign, item, counted)
    if protocol.has_options:
        agreement_value = extra.get("item_agreement")
    else:
        agreement_value = agreement.score_item_agreement(scores)
    return ItemResult(
        item_id=item.pk,
        system=item.system,
        origin=item.origin,
        origin_ref=item.origin_ref,
        doc_id=item.doc_id,
        seg_id=item.seg_id,
        src_lang=item.src_lang,
        tgt_lang=item.tgt_lang,
        source=item.source,
        target=item.target,
        n_submitted=len(judgments),
        n_scored=len(scores),
        mean_score=round(sum(scores) / len(scores), 6) if scores else None,
        complete=item.completed_count >= campaign.overlap,
        n_judgments=len(counted),
        agreement=agreement_value,
        majority=extra.get("majority"),
        overlap=campaign.overlap,
        judgments=judgments,
        question=item.question,
        choices=tuple(item.choices),
        meta=item.meta,
        n_non_scorable=sum(j.non_scorable for j in counted),
        extra=extra,
    )


_RESULT_FIELDS = (
    "id", "campaign_id", "system", "origin", "origin_ref", "doc_id", "seg_id", "src_lang",
    "tgt_lang", "source", "target", "completed_count", "position", "question", "choices",
    "questions", "meta",
)  # fmt: skip
