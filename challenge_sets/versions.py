"""Freeze: an immutable numbered version of a set's accepted, validated items.

The version stores its items as canonical JSONL (keys sorted, one item per line, item id order),
the QC-passed validation annotations of those items (annotation's own exporter), and a manifest
with the policy, counts, agreement, licence and SHA-256 checksums. Exports read only these
stored texts, so a version exported today and in a year gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from statistics import fmean
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation import exports as annotation_exports
from challenge_sets.models import ChallengeItem, ChallengeSet, FrozenVersion
from challenge_sets.services import ChallengeSetError, log

ANNOTATION_FORMATS = {"esa": "jsonl", "mqm": "mqm-tsv", "choice": "jsonl"}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def item_record(item: ChallengeItem) -> dict[str, Any]:
    """One item of a frozen version: text, translations, scores, decision, whole provenance."""
    record: dict[str, Any] = {
        "id": f"item-{item.pk}",
        "src_lang": item.src_lang,
        "tgt_lang": item.tgt_lang,
        "source": item.source,
        "translations": item.translations,
        "origin": item.origin,
        "origin_ref": item.origin_ref,
        "automatic_difficulty": item.automatic_difficulty,
        "human_difficulty": item.human_difficulty,
        "agreement": item.agreement,
        "n_judgments": item.n_judgments,
        "human": item.human,
        "decision": {"status": item.status, "reason": item.status_reason,
                     "proposal": item.proposal, "proposal_reason": item.proposal_reason},
        "near_duplicate_of": f"item-{item.duplicate_of_id}" if item.duplicate_of_id else None,
        "similarity": item.similarity,
        "provenance": item.provenance,
    }  # fmt: skip
    if item.choices:
        record |= {"question": item.question, "choices": item.choices, "attested": item.attested}
    return record


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "min": None, "max": None}
    return {"mean": round(fmean(values), 6), "min": min(values), "max": max(values)}


def _manifest(challenge_set, number, items, checksums, annotations_format, user, now) -> dict:
    policy = challenge_set.get_policy()
    agreements = [i.agreement for i in items if i.agreement is not None]
    return {
        "name": challenge_set.name,
        "slug": challenge_set.slug,
        "version": number,
        "frozen_at": now.isoformat(),
        "frozen_by": user.get_username() if user else None,
        "description": challenge_set.description,
        "licence": challenge_set.licence,
        "provenance_notes": challenge_set.provenance_notes,
        "policy": policy.to_dict(),
        "policy_description": policy.describe(),
        "validation_campaign": challenge_set.campaign.name if challenge_set.campaign_id else None,
        "counts": {
            "items": len(items),
            "by_origin": dict(sorted(Counter(i.origin for i in items).items())),
            "by_language_pair": dict(sorted(Counter(i.language_pair for i in items).items())),
            "judgments": sum(i.n_judgments for i in items),
        },
        "agreement": _stats(agreements) | {"items_with_agreement": len(agreements)},
        "human_difficulty": _stats(
            [i.human_difficulty for i in items if i.human_difficulty is not None]
        ),
        "automatic_difficulty": _stats(
            [i.automatic_difficulty for i in items if i.automatic_difficulty is not None]
        ),
        "annotations_format": annotations_format,
        "checksum": checksums["items.jsonl"],
        "checksums": {"algorithm": "sha256", **checksums},
    }


def freezable_items(challenge_set: ChallengeSet):
    """Accepted items whose human validation is in: the only items a version may hold."""
    return ChallengeItem.objects.filter(
        challenge_set=challenge_set,
        status=ChallengeItem.Status.ACCEPTED,
        validation=ChallengeItem.Validation.VALIDATED,
    ).order_by("id")


def freeze_version(challenge_set: ChallengeSet, *, user=None) -> FrozenVersion:
    now = timezone.now()
    with transaction.atomic():
        locked = ChallengeSet.objects.select_for_update().get(pk=challenge_set.pk)
        items = list(freezable_items(locked))
        if not items:
            raise ChallengeSetError("nothing to freeze: no accepted item has been validated yet")
        items_jsonl = "".join(canonical(item_record(i)) + "\n" for i in items)
        protocol = locked.get_policy().protocol
        annotations, annotations_format = "", ""
        campaign_item_ids = [cid for i in items for cid in i.human.get("campaign_item_ids", [])]
        if locked.campaign_id and campaign_item_ids:
            annotations_format = ANNOTATION_FORMATS[protocol]
            assert locked.campaign is not None  # only sets sent for validation have annotations
            annotations = "".join(
                annotation_exports.stream_export(
                    locked.campaign, annotations_format, item_ids=campaign_item_ids,
                    qc_passed_only=True,
                )
            )  # fmt: skip
        number = (locked.versions.aggregate(n=Max("number"))["n"] or 0) + 1
        checksums = {"items.jsonl": sha256(items_jsonl)}
        if annotations:
            checksums["annotations"] = sha256(annotations)
        manifest = _manifest(locked, number, items, checksums, annotations_format, user, now)
        version = FrozenVersion.objects.create(
            challenge_set=locked, number=number, items_jsonl=items_jsonl,
            annotations=annotations, annotations_format=annotations_format,
            manifest=json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=2) + "\n",
            checksum=checksums["items.jsonl"], n_items=len(items), created_by=user,
        )  # fmt: skip
        log(locked, user, "froze", reason=f"v{number}: {len(items)} items, sha256 "
            f"{checksums['items.jsonl'][:12]}")  # fmt: skip
    return version
