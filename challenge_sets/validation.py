"""Send a set's items to human validation and read the results back (DESIGN.md §1, §4).

The campaign is made through ``annotation.services`` from the set's policy; each item becomes
one annotation item per translation (ESA/MQM) or one choice item, with
``origin="challenge_sets"`` and ``origin_ref="cs:<set>:item:<item>:<system>"`` — annotation
knows nothing of challenge sets. Results come back only through
``annotation.selectors.item_results`` (annotators who pass QC), when annotation's
``item_completed`` signal fires (connected in ``ChallengeSetsConfig.ready``) and whenever a
curator refreshes the set, which also picks up verdicts that changed since (a pending annotator
who passed or failed later).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from statistics import fmean
from typing import Any

import numpy as np
from django.db import transaction

from annotation.models import Campaign, Item
from annotation.selectors import ItemResult, item_results
from annotation.services.campaigns import add_items, create_campaign, generate_attention_checks
from challenge_sets.models import ORIGIN, ChallengeItem, ChallengeSet
from challenge_sets.policy import ValidationPolicy, propose
from challenge_sets.services import ChallengeSetError, log

logger = logging.getLogger(__name__)

INSTRUCTIONS = {
    "esa": "These texts were curated as hard for machine translation. Mark every error span in "
    "the translation (minor or major), then score how much of the meaning it keeps (0–100).",
    "mqm": "These texts were curated as hard for machine translation. Mark every error with "
    "its category and severity.",
    "choice": "Choose the option that fits the sentence, and say how confident you are.",
}


def _ref(item: ChallengeItem, system: str) -> str:
    return f"cs:{item.challenge_set_id}:item:{item.pk}:{system}"


def _annotation_items(policy: ValidationPolicy, items: list[ChallengeItem]) -> list[dict]:
    rows = []
    for item in items:
        common = {"doc_id": f"cs{item.challenge_set_id}-item{item.pk}", "seg_id": str(item.pk),
                  "src_lang": item.src_lang, "tgt_lang": item.tgt_lang, "source": item.source,
                  "origin": ORIGIN, "meta": {"challenge_set": item.challenge_set_id}}  # fmt: skip
        if policy.protocol == "choice":
            rows.append(common | {"question": item.question, "choices": item.choices,
                                  "origin_ref": _ref(item, "choice")})  # fmt: skip
            continue
        for system, translation in sorted(item.translations.items()):
            rows.append(common | {"target": translation, "system": system,
                                  "origin_ref": _ref(item, system)})  # fmt: skip
    return rows


def _sendable(policy: ValidationPolicy, item: ChallengeItem) -> bool:
    if policy.protocol == "choice":
        return len(item.choices) >= 2 and bool(item.attested)
    return bool(item.translations)


def send_for_validation(challenge_set: ChallengeSet, *, user=None) -> tuple[int, int]:
    """Put the set's unsent items into its validation campaign (made on first use).

    Returns (items sent, items that cannot be judged with the policy's protocol: no
    translation for ESA/MQM, no choices or attested label for choice).
    """
    policy = challenge_set.get_policy()
    with transaction.atomic():
        locked = ChallengeSet.objects.select_for_update().get(pk=challenge_set.pk)
        unsent = list(
            ChallengeItem.objects.filter(challenge_set=locked, validation="").order_by("id")
        )
        ready = [i for i in unsent if _sendable(policy, i)]
        if not ready:
            raise ChallengeSetError(
                "nothing to send: every item is sent already or cannot be judged with "
                f"{policy.protocol} (translations, or choices with an attested label, needed)"
            )
        rows = _annotation_items(policy, ready)
        if locked.campaign is None:
            locked.campaign = _create_campaign(locked, policy, rows)
            locked.save(update_fields=["campaign", "updated_at"])
        else:
            add_items(locked.campaign, rows)
        ChallengeItem.objects.filter(pk__in=[i.pk for i in ready]).update(
            validation=ChallengeItem.Validation.SENT
        )
        log(locked, user, "sent for validation",
            reason=f"{len(ready)} items to campaign {locked.campaign.name!r}")  # fmt: skip
    challenge_set.campaign = locked.campaign
    return len(ready), len(unsent) - len(ready)


def _create_campaign(challenge_set: ChallengeSet, policy: ValidationPolicy, rows) -> Campaign:
    pairs = challenge_set.language_pairs
    src, tgt = pairs[0].split("-") if len(pairs) == 1 else ("", "")
    campaign = create_campaign(
        f"Challenge set: {challenge_set.name}"[:200],
        policy.protocol,
        rows,
        overlap=policy.overlap,
        src_lang=src,
        tgt_lang=tgt,
        instructions=INSTRUCTIONS[policy.protocol],
        qc_min_pass_rate=policy.qc_min_pass_rate,
        qc_min_seconds_per_item=policy.qc_min_seconds_per_item,
    )
    if policy.attention_checks and campaign.get_protocol().generated_checks:
        rng = np.random.default_rng(challenge_set.pk)
        generate_attention_checks(campaign, policy.attention_checks, rng)
    return campaign


# --- results ---------------------------------------------------------------------------------


def _item_id(origin_ref: str) -> int | None:
    parts = origin_ref.split(":")
    if len(parts) < 5 or parts[0] != "cs" or parts[2] != "item" or not parts[3].isdigit():
        return None
    return int(parts[3])


def _summary(results: list[ItemResult]) -> dict[str, Any]:
    """One challenge item's human result over its annotation items (one per translation)."""
    scores = {r.system or "choice": r.mean_score for r in results}
    scored = [s for s in scores.values() if s is not None]
    agreements = [r.agreement for r in results if r.agreement is not None]
    verdicts: dict[str, str] = {}
    for result in results:
        verdicts |= result.verdicts
    return {
        "campaign_item_ids": [r.item_id for r in results],
        "scores": scores,
        "mean_score": round(fmean(scored), 6) if scored else None,
        "difficulty": round(100.0 - fmean(scored), 6) if scored else None,
        "agreement": round(fmean(agreements), 6) if agreements else None,
        "n_judgments": min(r.n_judgments for r in results),
        "n_submitted": max(r.n_submitted for r in results),
        "majority": results[0].majority if len(results) == 1 else None,
        "verdicts": dict(sorted(verdicts.items())),
        "complete": all(r.complete for r in results),
        "validated": all(r.validated for r in results),
    }


def _apply(item: ChallengeItem, results: list[ItemResult], policy: ValidationPolicy) -> None:
    summary = _summary(results)
    proposal = propose(
        policy,
        human_difficulty=summary["difficulty"],
        agreement=summary["agreement"],
        majority=summary["majority"],
        attested=item.attested,
        n_judgments=summary["n_judgments"],
    )
    item.human = summary
    item.human_difficulty = summary["difficulty"]
    item.agreement = summary["agreement"]
    item.n_judgments = summary["n_judgments"]
    if summary["complete"] and summary["n_judgments"] > 0:
        item.validation = ChallengeItem.Validation.VALIDATED
    item.proposal = proposal.verdict if proposal else ""
    item.proposal_reason = proposal.reason[:300] if proposal else ""


_RESULT_FIELDS = ["human", "human_difficulty", "agreement", "n_judgments", "validation",
                  "proposal", "proposal_reason"]  # fmt: skip


def refresh_results(challenge_set: ChallengeSet, item_id: int | None = None) -> int:
    """Read the campaign's QC-passed results into the set's items; returns items updated."""
    if challenge_set.campaign_id is None:
        return 0
    campaign = challenge_set.campaign
    assert campaign is not None  # results exist only for sets sent for validation
    prefix = f"cs:{challenge_set.pk}:item:" + (f"{item_id}:" if item_id is not None else "")
    grouped: dict[int, list[ItemResult]] = defaultdict(list)
    for result in item_results(campaign, origin=ORIGIN, origin_ref_prefix=prefix):
        if (found := _item_id(result.origin_ref)) is not None:
            grouped[found].append(result)
    if not grouped:
        return 0
    policy = challenge_set.get_policy()
    with transaction.atomic():
        items = list(
            ChallengeItem.objects.select_for_update()
            .filter(challenge_set=challenge_set, pk__in=list(grouped))
            .exclude(validation="")
        )
        for item in items:
            _apply(item, grouped[item.pk], policy)
        ChallengeItem.objects.bulk_update(items, _RESULT_FIELDS, batch_size=500)
    return len(items)


def on_item_completed(sender, item: Item, **kwargs) -> None:
    """annotation's ``item_completed``: refresh the challenge item that annotation item is of."""
    if item.origin != ORIGIN:
        return
    parts = item.origin_ref.split(":")
    if len(parts) < 5 or not parts[1].isdigit() or (found := _item_id(item.origin_ref)) is None:
        return
    challenge_set = ChallengeSet.objects.filter(pk=int(parts[1])).first()
    if challenge_set is None:
        return  # the set was deleted; its campaign outlives it
    refresh_results(challenge_set, item_id=found)
