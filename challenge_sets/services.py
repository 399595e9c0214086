"""Write use-cases of challenge sets: create a set, add items from a source, decide on items.

Sending for validation and reading results back live in ``validation.py``; freezing versions in
``versions.py``. Every decision on an item writes an :class:`AuditEntry` in the same
transaction, so the log is complete whatever path (page, bulk action, API) made it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from challenge_sets import similarity, sources
from challenge_sets.models import AuditEntry, ChallengeItem, ChallengeSet
from challenge_sets.policy import PolicyError, ValidationPolicy
from challenge_sets.sources import Candidate, SourceError

__all__ = [
    "AddResult",
    "ChallengeSetError",
    "add_items",
    "add_items_from_source",
    "create_challenge_set",
    "decide_items",
    "log",
]


class ChallengeSetError(ValueError):
    """A request on a set that cannot be carried out, in words a curator can act on."""


@dataclass(frozen=True)
class AddResult:
    added: int
    skipped: int  # already in the set (same origin reference)
    near_duplicates: int


def log(challenge_set: ChallengeSet, user, action: str, *, item=None, from_status="",
        to_status="", reason="") -> AuditEntry:  # fmt: skip
    return AuditEntry.objects.create(
        challenge_set=challenge_set, item=item, user=user, action=action,
        from_status=from_status, to_status=to_status, reason=reason[:500],
    )  # fmt: skip


def create_challenge_set(
    *,
    name: str,
    description: str = "",
    language_pairs: Iterable[str] = (),
    licence: str = "CC-BY-4.0",
    provenance_notes: str = "",
    policy: dict[str, Any] | None = None,
    created_by=None,
) -> ChallengeSet:
    name = name.strip()
    if not name:
        raise ChallengeSetError("a set needs a name")
    if ChallengeSet.objects.filter(name=name).exists():
        raise ChallengeSetError(f"a set named {name!r} already exists")
    try:
        checked = ValidationPolicy.from_dict(policy)
    except PolicyError as exc:
        raise ChallengeSetError(f"validation policy: {exc}") from exc
    pairs = sorted({p.strip() for p in language_pairs if p.strip()})
    for pair in pairs:
        if len(pair.split("-")) != 2 or not all(pair.split("-")):
            raise ChallengeSetError(f"language pair {pair!r} must look like en-cs")
    with transaction.atomic():
        challenge_set = ChallengeSet.objects.create(
            name=name, description=description, language_pairs=pairs, licence=licence,
            provenance_notes=provenance_notes, policy=checked.to_dict(), created_by=created_by,
        )  # fmt: skip
        log(challenge_set, created_by, "created", reason=checked.describe())
    return challenge_set


def _text_key(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()


def add_items(
    challenge_set: ChallengeSet,
    candidates: list[Candidate],
    *,
    user=None,
    threshold: float = similarity.DEFAULT_THRESHOLD,
    on_written: Callable[[AddResult], None] | None = None,
) -> AddResult:
    """Save candidates not yet in the set, flagging near-duplicates of the set's texts.

    Near-duplicates are kept and marked (``duplicate_of``, ``similarity``) for the curator to
    decide: a paraphrase can be a legitimate, different test item. ``on_written(result)`` runs
    inside the writing transaction (a background import marks its job done there).
    """
    with transaction.atomic():
        locked = ChallengeSet.objects.select_for_update().get(pk=challenge_set.pk)
        existing = list(
            ChallengeItem.objects.filter(challenge_set=locked)
            .order_by("id")
            .values_list("id", "origin", "origin_ref", "source")
        )
        known_refs = {(o, r) for _, o, r, _ in existing if r}
        fresh: list[Candidate] = []
        for candidate in candidates:
            key = (candidate.origin, candidate.origin_ref)
            if candidate.origin_ref and key in known_refs:
                continue
            known_refs.add(key)
            fresh.append(candidate)
        matches = similarity.nearest_earlier(
            [row[3] for row in existing], [c.source for c in fresh], threshold
        )
        rows = [_item(locked, c) for c in fresh]
        created = ChallengeItem.objects.bulk_create(rows, batch_size=500)
        ids = [row[0] for row in existing] + [item.pk for item in created]
        flagged = []
        for item, match in zip(created, matches, strict=True):
            if match is not None:
                item.duplicate_of_id = ids[match.index]
                item.similarity = match.similarity
                flagged.append(item)
        ChallengeItem.objects.bulk_update(flagged, ["duplicate_of", "similarity"], batch_size=500)
        origins = sorted({c.origin for c in fresh})
        # Source-only items (no target language yet) name no pair.
        new_pairs = {i.language_pair for i in created if i.tgt_lang}
        pairs = sorted(set(locked.language_pairs) | new_pairs)
        if pairs != locked.language_pairs:
            locked.language_pairs = pairs
            locked.save(update_fields=["language_pairs", "updated_at"])
        log(locked, user, "added items",
            reason=f"{len(created)} from {', '.join(origins) or '—'}; "
                   f"{len(candidates) - len(fresh)} already in the set; "
                   f"{len(flagged)} near-duplicates flagged")  # fmt: skip
        result = AddResult(len(created), len(candidates) - len(fresh), len(flagged))
        if on_written is not None:
            on_written(result)
    return result


def _item(challenge_set: ChallengeSet, candidate: Candidate) -> ChallengeItem:
    provenance = dict(candidate.provenance)
    provenance.setdefault("kind", candidate.origin)
    provenance["text_sha256"] = _text_key(candidate.source)
    return ChallengeItem(
        challenge_set=challenge_set,
        origin=candidate.origin,
        origin_ref=candidate.origin_ref[:255],
        src_lang=candidate.src_lang,
        tgt_lang=candidate.tgt_lang,
        source=candidate.source,
        translations=candidate.translations,
        question=candidate.question,
        choices=list(candidate.choices),
        attested=candidate.attested,
        provenance=provenance,
        automatic_difficulty=candidate.automatic_difficulty,
    )


def add_items_from_source(
    challenge_set: ChallengeSet, source_name: str, params: dict[str, Any], *, user=None
) -> AddResult:
    """Ask a registered source for candidates and add them; all or nothing.

    Raises :class:`SourceError` (with every problem) before anything is written.
    """
    source = sources.get(source_name)
    candidates = source.candidates(params)
    if not candidates:
        raise SourceError("the source gave no items")
    return add_items(challenge_set, candidates, user=user)


def decide_items(
    challenge_set: ChallengeSet,
    item_ids: Iterable[int],
    status: str,
    *,
    reason: str = "",
    user=None,
) -> int:
    """Accept, reject or mark items for review (one or many), each decision in the audit log."""
    if status not in ChallengeItem.Status.values or status == ChallengeItem.Status.PENDING:
        raise ChallengeSetError("decide accepted, rejected or needs_review")
    if status != ChallengeItem.Status.ACCEPTED and not reason.strip():
        raise ChallengeSetError("a rejection or a review needs a reason")
    ids = sorted({int(i) for i in item_ids})
    if not ids:
        raise ChallengeSetError("choose at least one item")
    now = timezone.now()
    with transaction.atomic():
        items = list(
            ChallengeItem.objects.select_for_update()
            .filter(challenge_set=challenge_set, pk__in=ids)
            .order_by("id")
        )
        if len(items) != len(ids):
            raise ChallengeSetError("some items are not in this set")
        for item in items:
            log(challenge_set, user, "decided", item=item, from_status=item.status,
                to_status=status, reason=reason)  # fmt: skip
            item.status = status
            item.status_reason = reason[:500]
            item.updated_at = now
        ChallengeItem.objects.bulk_update(items, ["status", "status_reason", "updated_at"])
    return len(items)
