"""Read queries of challenge sets: the curation table, an item's detail, the set's statistics."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Q, QuerySet

from challenge_sets.models import AuditEntry, ChallengeItem, ChallengeSet, FrozenVersion

PAGE_SIZE = 50
SORTS = {
    "id": "id",
    "origin": "origin",
    "lp": "src_lang",
    "auto": "automatic_difficulty",
    "human": "human_difficulty",
    "agreement": "agreement",
    "status": "status",
    "similarity": "similarity",
}
FILTERS = ("origin", "lp", "status", "proposal", "validation", "duplicates", "q")


@dataclass(frozen=True)
class TableState:
    """The table's filters and sort as they came in the query string (kept in every link)."""

    filters: dict[str, str]
    sort: str
    descending: bool
    page: int

    @classmethod
    def from_query(cls, query) -> TableState:
        sort = query.get("sort", "id")
        raw_page = query.get("page", "1")
        return cls(
            filters={k: query.get(k, "").strip() for k in FILTERS if query.get(k, "").strip()},
            sort=sort if sort in SORTS else "id",
            descending=query.get("dir") == "desc",
            page=int(raw_page) if raw_page.isdigit() else 1,
        )


def filtered_items(challenge_set: ChallengeSet, state: TableState) -> QuerySet[ChallengeItem]:
    items = ChallengeItem.objects.filter(challenge_set=challenge_set)
    f = state.filters
    if "origin" in f:
        items = items.filter(origin=f["origin"])
    if "lp" in f and "-" in f["lp"]:
        src, tgt = f["lp"].split("-", 1)
        items = items.filter(src_lang=src, tgt_lang=tgt)
    if "status" in f:
        items = items.filter(status=f["status"])
    if "proposal" in f:
        items = items.filter(proposal="" if f["proposal"] == "none" else f["proposal"])
    if "validation" in f:
        items = items.filter(validation="" if f["validation"] == "none" else f["validation"])
    if f.get("duplicates") == "1":
        items = items.filter(duplicate_of__isnull=False)
    if "q" in f:
        items = items.filter(Q(source__icontains=f["q"]) | Q(origin_ref__icontains=f["q"]))
    column = F(SORTS[state.sort])
    order = column.desc(nulls_last=True) if state.descending else column.asc(nulls_last=True)
    return items.order_by(order, "id")


def item_page(challenge_set: ChallengeSet, state: TableState) -> Page:
    fields = ("id", "origin", "origin_ref", "src_lang", "tgt_lang", "source",
              "automatic_difficulty", "human_difficulty", "agreement", "n_judgments",
              "validation", "proposal", "status", "duplicate_of_id", "similarity")  # fmt: skip
    paginator = Paginator(filtered_items(challenge_set, state).only(*fields), PAGE_SIZE)
    return paginator.get_page(state.page)


def filter_options(challenge_set: ChallengeSet) -> dict[str, list[str]]:
    items = ChallengeItem.objects.filter(challenge_set=challenge_set)
    pairs = items.values_list("src_lang", "tgt_lang").distinct().order_by("src_lang", "tgt_lang")
    return {
        "origin": list(items.values_list("origin", flat=True).distinct().order_by("origin")),
        "lp": [f"{s}-{t}" for s, t in pairs],
    }


def statistics(challenge_set: ChallengeSet) -> dict[str, Any]:
    """Counts by origin, language pair and status; difficulty and agreement summaries."""
    items = ChallengeItem.objects.filter(challenge_set=challenge_set)
    by = {
        column: dict(items.values_list(column).annotate(n=Count("id")).values_list(column, "n"))
        for column in ("origin", "status", "validation", "proposal")
    }
    pairs = Counter(
        f"{s}-{t}" if t else s for s, t in items.values_list("src_lang", "tgt_lang").iterator()
    )
    values = list(items.values_list("automatic_difficulty", "human_difficulty", "agreement"))
    auto = [a for a, _, _ in values if a is not None]
    human = [h for _, h, _ in values if h is not None]
    agreements = [g for _, _, g in values if g is not None]
    return {
        "total": len(values),
        "by_origin": dict(sorted(by["origin"].items())),
        "by_language_pair": dict(sorted(pairs.items())),
        "by_status": {s.label: by["status"].get(s.value, 0) for s in ChallengeItem.Status},
        "validated": by["validation"].get(ChallengeItem.Validation.VALIDATED, 0),
        "sent": by["validation"].get(ChallengeItem.Validation.SENT, 0),
        "proposals": {k or "none": v for k, v in sorted(by["proposal"].items())},
        "near_duplicates": items.filter(duplicate_of__isnull=False).count(),
        "automatic": auto,
        "human": human,
        "mean_agreement": round(sum(agreements) / len(agreements), 3) if agreements else None,
        "diversity": _diversity(pairs, by["origin"]),
    }


def _diversity(*counters) -> float | None:
    """Mean normalised entropy of origins and language pairs: 0 one kind only, 1 even spread."""
    shares = []
    for counter in counters:
        total = sum(counter.values())
        if total and len(counter) > 1:
            entropy = -sum((n / total) * math.log(n / total) for n in counter.values() if n)
            shares.append(entropy / math.log(len(counter)))
        elif total:
            shares.append(0.0)
    return round(sum(shares) / len(shares), 3) if shares else None


def item_detail(challenge_set: ChallengeSet, item_id: int) -> ChallengeItem | None:
    return (
        ChallengeItem.objects.filter(challenge_set=challenge_set, pk=item_id)
        .select_related("duplicate_of")
        .first()
    )


def audit_log(challenge_set: ChallengeSet, *, item=None, limit: int = 100) -> list[AuditEntry]:
    entries = AuditEntry.objects.filter(challenge_set=challenge_set).select_related("user", "item")
    if item is not None:
        entries = entries.filter(item=item)
    return list(entries[:limit])


def versions(challenge_set: ChallengeSet) -> QuerySet[FrozenVersion]:
    return challenge_set.versions.select_related("created_by").defer("items_jsonl", "annotations")


def version_of(challenge_set: ChallengeSet, number: int) -> FrozenVersion | None:
    return challenge_set.versions.filter(number=number).first()


def set_rows(queryset: QuerySet[ChallengeSet]) -> QuerySet[ChallengeSet]:
    return queryset.annotate(
        n_items=Count("items", distinct=True),
        n_accepted=Count("items", filter=Q(items__status="accepted"), distinct=True),
        n_versions=Count("versions", distinct=True),
    ).select_related("created_by")
