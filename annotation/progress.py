"""Read queries behind the campaign dashboard: progress, per-annotator rows, agreement, charts.

Counts and per-annotator figures are database aggregates (a fixed number of queries whatever the
campaign size). Agreement needs every (item, annotator, answer) triple, so it is computed from a
streamed ``values_list`` and cached under a version key that changes with every submission, edit
or enrollment change; polling an unchanged campaign does not recompute it.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.core.cache import caches
from django.db.models import (
    Avg,
    Count,
    F,
    FloatField,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Q,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce, TruncHour, TruncMinute
from django.db.models.query import QuerySet
from django.utils import timezone

from annotation import agreement, charts, qc, selectors
from annotation.models import Annotation, Campaign, Enrollment, Item

MINUTE, HOUR = timedelta(minutes=1), timedelta(hours=1)
ACTIVE_WINDOW = timedelta(minutes=15)
"""An annotator with activity this recent counts as active now."""
CACHE_SECONDS = 300
TIED_ITEMS_SHOWN = 20

SUBMITTED = Annotation.Status.SUBMITTED
REGULAR = Item.Kind.REGULAR
TUTORIAL = Item.Kind.TUTORIAL


def _count_subquery(queryset: QuerySet, field_name: str = "campaign") -> Any:
    """A correlated ``COUNT(*)`` per campaign, without joining (joins would multiply counts)."""
    counted = (
        queryset.filter(**{field_name: OuterRef("pk")})
        .order_by()
        .values(field_name)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


@dataclass(frozen=True)
class CampaignProgress:
    campaign: Campaign
    n_items: int
    submitted: int
    completed_items: int
    n_annotators: int
    over_overlap_items: int = 0
    """Regular items with more submitted judgments than the overlap: a lapsed claim submitted
    late beside the claim that took its slot; both judgments are kept (ADR 0049)."""
    over_overlap_judgments: int = 0
    """The judgments those items have beyond the overlap."""

    @property
    def target(self) -> int:
        """Annotations needed: every regular item judged ``overlap`` times."""
        return self.n_items * self.campaign.overlap

    @property
    def slots_filled(self) -> int:
        """Submitted judgments that count towards the target (at most ``overlap`` per item)."""
        return self.submitted - self.over_overlap_judgments

    @property
    def percent(self) -> float:
        if not self.target:
            return 0.0
        return round(min(100.0, 100.0 * self.slots_filled / self.target), 1)

    @property
    def is_live(self) -> bool:
        """Whether the dashboard keeps polling (a closed campaign no longer changes)."""
        return self.campaign.status != Campaign.Status.CLOSED


def campaigns_progress(campaigns: QuerySet[Campaign]) -> list[CampaignProgress]:
    """Progress of many campaigns in one query (correlated subqueries, no N+1)."""
    annotated = campaigns.annotate(
        n_items=_count_subquery(Item.objects.filter(kind=REGULAR)),
        n_submitted=_count_subquery(
            Annotation.objects.filter(status=SUBMITTED, item__kind=REGULAR)
        ),
        n_completed=_count_subquery(
            Item.objects.filter(kind=REGULAR, completed_count__gte=OuterRef("overlap"))
        ),
        n_annotators=_count_subquery(Enrollment.objects.all()),
        n_over_overlap=_count_subquery(_over_overlap()),
        n_beyond_overlap=_beyond_overlap_subquery(),
    ).order_by("-created_at")
    return [
        CampaignProgress(
            c,
            c.n_items,
            c.n_submitted,
            c.n_completed,
            c.n_annotators,
            over_overlap_items=c.n_over_overlap,
            over_overlap_judgments=c.n_beyond_overlap,
        )
        for c in annotated
    ]


def _over_overlap() -> QuerySet[Item]:
    """Regular items of the outer campaign judged more often than its overlap (ADR 0049)."""
    return Item.objects.filter(kind=REGULAR, completed_count__gt=OuterRef("overlap"))


def _beyond_overlap_subquery() -> Any:
    """Per campaign, the judgments its items have beyond the overlap."""
    beyond = (
        _over_overlap()
        .filter(campaign=OuterRef("pk"))
        .order_by()
        .values("campaign")
        .annotate(n=Sum(F("completed_count") - OuterRef("overlap")))
        .values("n")
    )
    return Coalesce(Subquery(beyond, output_field=IntegerField()), 0)


def campaign_progress(campaign: Campaign) -> CampaignProgress:
    return campaigns_progress(Campaign.objects.filter(pk=campaign.pk))[0]


# --- annotators ------------------------------------------------------------------------------


@dataclass
class AnnotatorProgress:
    enrollment: Enrollment
    pseudonym: str
    done: int
    available: int
    in_progress: int
    time_seconds: float
    last_active: datetime | None
    mean_score: float | None
    qc: qc.QCSummary | None = None

    @property
    def percent(self) -> float:
        return round(min(100.0, 100.0 * self.done / self.available), 1) if self.available else 0.0

    @property
    def time_display(self) -> str:
        """Total time as h:mm:ss (m:ss under an hour)."""
        seconds = round(self.time_seconds)
        hours, rest = divmod(seconds, 3600)
        minutes, seconds = divmod(rest, 60)
        return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"

    @property
    def seconds_per_item(self) -> float | None:
        return round(self.time_seconds / self.done, 1) if self.done else None

    @property
    def active_now(self) -> bool:
        return bool(self.last_active and timezone.now() - self.last_active < ACTIVE_WINDOW)


def annotator_progress(
    campaign: Campaign, *, with_qc: bool = True, version: str | None = None
) -> list[AnnotatorProgress]:
    """One row per enrolled annotator: done / available, time, last activity, QC summary.

    ``available`` is what ``next_item_for`` can give one annotator at most: regular items plus
    attention checks (checks go to everyone), capped by ``max_items_per_annotator``; ``done``
    counts their submissions on those items (tutorials are the warm-up, not counted). Names and
    emails are not read: the dashboard shows pseudonyms, like the exports.
    """
    available = Item.objects.filter(campaign=campaign).exclude(kind=TUTORIAL).count()
    if campaign.max_items_per_annotator:
        available = min(available, campaign.max_items_per_annotator)
    counted = ~Q(item__kind=TUTORIAL)
    stats = {
        row["annotator_id"]: row
        for row in Annotation.objects.filter(campaign=campaign)
        .values("annotator_id")
        .annotate(
            done=Count("id", filter=Q(status=SUBMITTED) & counted),
            in_progress=Count("id", filter=~Q(status=SUBMITTED) & counted),
            time_seconds=Coalesce(
                Sum("time_spent_seconds", filter=Q(status=SUBMITTED) & counted), 0.0
            ),
            last_active=Max("last_activity_at"),
            mean_score=Avg("score", filter=Q(status=SUBMITTED, item__kind=REGULAR)),
        )
    }
    enrollments = Enrollment.objects.filter(campaign=campaign).select_related(
        "campaign", "annotator"
    )
    rows = []
    for enrollment in enrollments.order_by("annotator__pseudonym"):
        row = stats.get(enrollment.annotator_id, {})
        rows.append(
            AnnotatorProgress(
                enrollment=enrollment,
                pseudonym=enrollment.annotator.pseudonym,
                done=row.get("done", 0),
                available=available,
                in_progress=row.get("in_progress", 0),
                time_seconds=float(row.get("time_seconds") or 0.0),
                last_active=row.get("last_active"),
                mean_score=_round(row.get("mean_score")),
            )
        )
    if with_qc:
        summaries = qc_summaries(campaign, [r.enrollment for r in rows], version)
        for entry in rows:
            entry.qc = summaries[entry.enrollment.pk]
    return rows


def qc_summaries(
    campaign: Campaign, enrollments: list[Enrollment], version: str | None = None
) -> dict[int, qc.QCSummary]:
    """QC summary per enrollment id, cached per campaign version (polls do not recompute).

    One annotator's submissions at a time (``qc.summary_for``), not the whole campaign at once,
    so a very large campaign never has every annotation in memory.
    """
    key = f"annotation:qc:{version or version_key(campaign)}"
    summaries = caches["derived"].get(key)
    if summaries is None or set(summaries) != {e.pk for e in enrollments}:
        summaries = {e.pk: qc.summary_for(e) for e in enrollments}
        caches["derived"].set(key, summaries, CACHE_SECONDS)
    return summaries


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(float(value), digits)


# --- agreement -------------------------------------------------------------------------------


def version_key(campaign: Campaign) -> str:
    """Changes whenever the campaign, one of its items, annotations or enrollments changes."""
    stamps = []
    for model in (Item, Annotation, Enrollment):
        found = model.objects.filter(campaign=campaign).aggregate(
            n=Count("id"), last=Max("updated_at")
        )
        stamps.append(f"{found['n']}:{found['last'].timestamp() if found['last'] else 0}")
    return f"{campaign.pk}-{campaign.updated_at.timestamp()}-{'-'.join(stamps)}"


@dataclass
class AgreementSummary:
    protocol: str
    scores: agreement.ScoreAgreement | None = None
    choices: agreement.ChoiceAgreement | None = None
    families: list[agreement.FamilyAgreement] = field(default_factory=list)
    """Questionnaires: agreement per question family."""
    majority_items: int = 0
    tied_items: int = 0
    pending_items: int = 0
    tied: list[dict[str, Any]] = field(default_factory=list)
    option_counts: dict[str, int] = field(default_factory=dict)


def _submitted_regular(campaign: Campaign) -> QuerySet[Annotation]:
    return Annotation.objects.filter(campaign=campaign, status=SUBMITTED, item__kind=REGULAR)


def score_rows(campaign: Campaign):
    """(item id, annotator pseudonym, 0–100 score) of every submitted regular annotation."""
    return (
        _submitted_regular(campaign)
        .filter(score__isnull=False)
        .values_list("item_id", "annotator__pseudonym", "score")
        .iterator(chunk_size=5000)
    )


def choice_answers(campaign: Campaign) -> tuple[dict[int, list[Any]], dict[int, list[str]]]:
    """Per item, the answers as option labels (a frozenset each for multi-select), and the
    item's options."""
    options = dict(
        Item.objects.filter(campaign=campaign, kind=REGULAR).values_list("id", "choices")
    )
    answers: dict[int, list[Any]] = defaultdict(list)
    rows = _submitted_regular(campaign).values_list("item_id", "answer").order_by("id")
    for item_id, answer in rows.iterator(chunk_size=5000):
        labels = [options[item_id][i] for i in (answer or {}).get("selected", [])]
        if campaign.multi_select:
            answers[item_id].append(frozenset(labels))
        else:
            answers[item_id].append(labels[0] if labels else "")
    return dict(answers), options


def _summarize_choices(campaign: Campaign, summary: AgreementSummary) -> None:
    answers, options = choice_answers(campaign)
    option_lists = {tuple(v) for v in options.values()}
    shared = list(option_lists.pop()) if len(option_lists) == 1 else None
    sizes = Counter(len(v) for v in options.values())
    # Items with their own option lists (lexical variations): q = the usual number of options.
    q = len(shared) if shared else (sizes.most_common(1)[0][0] if sizes else None)
    summary.choices = agreement.choice_agreement(
        answers, categories=shared, n_categories=q, multi_select=campaign.multi_select
    )
    counts: Counter[str] = Counter()
    for item_id, labels in answers.items():
        for label in labels:
            for option in sorted(label) if isinstance(label, frozenset) else [label]:
                counts[option] += 1
        if len(labels) < campaign.overlap:
            summary.pending_items += 1
            continue
        vote = (
            agreement.majority_multi(labels)
            if campaign.multi_select
            else agreement.majority(labels)
        )
        if vote.tie:
            summary.tied_items += 1
            if len(summary.tied) < TIED_ITEMS_SHOWN:
                summary.tied.append({"item_id": item_id, "answers": [_label(a) for a in labels]})
        else:
            summary.majority_items += 1
    summary.pending_items += len(options) - len(answers)
    summary.option_counts = dict(counts.most_common(15))


def question_family_answers(
    campaign: Campaign,
) -> dict[tuple[str, str], tuple[dict[tuple[int, str], list[Any]], dict[tuple[int, str], int]]]:
    """Per (family, question type): the answers of every (item, question) unit and its number
    of options, over the submitted answers to regular items."""
    questions = dict(
        Item.objects.filter(campaign=campaign, kind=REGULAR).values_list("id", "questions")
    )
    families: dict[tuple[str, str], tuple[dict, dict]] = {}
    for item_id, item_questions in questions.items():
        for question in item_questions or []:
            answers, n_options = families.setdefault(
                (question["family"], question["type"]), ({}, {})
            )
            answers[(item_id, question["id"])] = []
            n_options[(item_id, question["id"])] = len(question.get("options", []))
    rows = _submitted_regular(campaign).values_list("item_id", "answer").order_by("id")
    for item_id, answer in rows.iterator(chunk_size=5000):
        given = (answer or {}).get("answers", {})
        for question in questions.get(item_id) or []:
            if question["id"] in given:
                answers = families[(question["family"], question["type"])][0]
                answers[(item_id, question["id"])].append(given[question["id"]])
    return families


def _summarize_questions(campaign: Campaign, summary: AgreementSummary) -> None:
    families = question_family_answers(campaign)
    summary.families = [
        agreement.family_agreement(family, kind, answers, n_options)
        for (family, kind), (answers, n_options) in sorted(families.items())
    ]


def _label(answer: Any) -> str:
    return "|".join(sorted(answer)) if isinstance(answer, frozenset) else str(answer)


def campaign_agreement(campaign: Campaign, version: str | None = None) -> AgreementSummary:
    """Agreement for the campaign's protocol, cached per version (see :func:`version_key`)."""
    version = version or version_key(campaign)
    key = f"annotation:agreement:{version}"
    cached = caches["derived"].get(key)
    if cached is not None:
        return cached
    summary = AgreementSummary(protocol=campaign.protocol)
    protocol = campaign.get_protocol()
    if protocol.has_options:
        _summarize_choices(campaign, summary)
    elif protocol.has_questions:
        _summarize_questions(campaign, summary)
    else:
        summary.scores = agreement.score_agreement(score_rows(campaign))
    caches["derived"].set(key, summary, CACHE_SECONDS)
    return summary


# --- charts ----------------------------------------------------------------------------------

CHARTS = ("scores", "progress", "annotators", "annotator-scores")


def score_bins(campaign: Campaign) -> list[int]:
    """Per-item scores counted in ten bins of width 10 (100 goes to the last bin).

    An item's score is its mean over annotators who pass QC (``selectors.item_results``, as
    producers and the per-item export read it), so a failing annotator moves no bar.
    """
    counts = [0] * 10
    for result in selectors.item_results(campaign):
        if result.mean_score is not None:
            counts[min(int(result.mean_score // 10), 9)] += 1
    return counts


def submission_buckets(campaign: Campaign) -> tuple[list[tuple[datetime, int]], timedelta]:
    """Submissions on regular items (what the target counts) per minute, or per hour for
    campaigns longer than two days, and the width of a bucket."""
    submitted = _submitted_regular(campaign).filter(submitted_at__isnull=False)
    span = submitted.aggregate(first=Min("submitted_at"), last=Max("submitted_at"))
    if span["first"] is None:
        return [], MINUTE
    hourly = span["last"] - span["first"] > timedelta(days=2)
    trunc = TruncHour if hourly else TruncMinute
    buckets = list(
        submitted.annotate(bucket=trunc("submitted_at"))
        .values("bucket")
        .annotate(n=Count("id"))
        .order_by("bucket")
        .values_list("bucket", "n")
    )
    return buckets, HOUR if hourly else MINUTE


def annotator_score_stats(campaign: Campaign) -> list[tuple[str, float, float, int]]:
    """(pseudonym, mean, std, n) per annotator; std from E[x²] − E[x]² (SQLite has no STDDEV)."""
    rows = (
        _submitted_regular(campaign)
        .filter(score__isnull=False)
        .values("annotator__pseudonym")
        .annotate(
            mean=Avg("score"),
            mean_sq=Avg(F("score") * F("score"), output_field=FloatField()),
            n=Count("id"),
        )
        .order_by("annotator__pseudonym")
    )
    return [
        (
            r["annotator__pseudonym"],
            round(r["mean"], 3),
            round(max(0.0, r["mean_sq"] - r["mean"] ** 2) ** 0.5, 3),
            r["n"],
        )
        for r in rows
    ]


def chart_svg(campaign: Campaign, name: str, version: str | None = None) -> str:
    """One dashboard chart as SVG, cached per campaign version."""
    if name not in CHARTS:
        raise KeyError(name)
    version = version or version_key(campaign)
    key = f"annotation:chart:{name}:{version}"
    cached = caches["derived"].get(key)
    if cached is not None:
        return cached
    if name == "scores":
        if campaign.get_protocol().has_options:
            svg = charts.option_bars(campaign_agreement(campaign, version).option_counts)
        else:
            svg = charts.score_histogram(
                score_bins(campaign), title="Item scores (QC passed)", unit="items"
            )
    elif name == "progress":
        target = campaign_progress(campaign).target
        buckets, width = submission_buckets(campaign)
        svg = charts.progress_over_time(buckets, target, bucket=width)
    elif name == "annotators":
        rows = annotator_progress(campaign, with_qc=False)
        svg = charts.annotator_progress([(r.pseudonym, r.done, r.available) for r in rows])
    else:
        svg = charts.annotator_scores(annotator_score_stats(campaign))
    caches["derived"].set(key, svg, CACHE_SECONDS)
    return svg


def median_seconds(rows: list[AnnotatorProgress]) -> float | None:
    values = [r.seconds_per_item for r in rows if r.seconds_per_item is not None]
    return round(statistics.median(values), 1) if values else None
