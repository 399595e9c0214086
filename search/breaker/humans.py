"""People judge and translate MT-breaker's selected texts (seed 001 §3.6).

* :func:`send_to_annotation`: the selected step of every chain of finished runs (one run, or
  every run of a comparison) × each system (the run's targets, plus the human translations
  received so far) becomes an item of a new ESA, MQM or ESA+MQM campaign; or each selected
  text becomes an item of a translation-task campaign.
* :func:`on_item_completed` (connected in ``SearchConfig.ready``) records what people said
  once an item is complete, read through ``annotation.selectors.item_results`` (judgments of
  annotators who pass QC only): a scored item's mean score is stored beside the step's QE
  (``BreakerStep.human``) and the chain's ``human_quality`` replaces ``selected_quality``
  where people judged it (the automatic value stays); a translated item's translations become
  the ``Human`` system of the step (``BreakerStep.human_translations``), which the next send
  includes like any target.

Items carry ``origin="breaker"`` and ``origin_ref="<purpose>/run<id>/chain<index>/step<index>
[/<system>]"``; annotation never learns about runs.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from django.db import transaction

from annotation.models import Campaign, Item
from annotation.protocols import get as get_protocol
from annotation.protocols.segments import mqm_label
from annotation.refusals import CampaignImportError
from annotation.selectors import ItemResult, item_results
from annotation.services.campaigns import create_campaign
from search.models import BreakerCampaign, BreakerChain, BreakerRun, BreakerStep

__all__ = [
    "HUMAN_SYSTEM",
    "ORIGIN",
    "SCORING_PROTOCOLS",
    "SendError",
    "human_score",
    "on_item_completed",
    "parse_ref",
    "qe_of",
    "record_results",
    "refresh_human_results",
    "send_to_annotation",
]

ORIGIN = "breaker"
HUMAN_SYSTEM = "Human"
SCORING_PROTOCOLS = ("esa", "mqm", "esa_mqm")
TRANSLATION_PROTOCOL = "translation"
MAX_OVERLAP = 10
_REF = re.compile(r"(score|translate)/run(\d+)/chain(\d+)/step(\d+)(?:/(.+))?", re.DOTALL)
INSTRUCTIONS = {
    "esa": "Mark every error span in the translation (minor or major), then score how much of "
    "the meaning it keeps: 0 none, 33 some, 66 most, 100 all of it with perfect grammar.",
    "mqm": "Mark every error span in the translation with its MQM category and severity, or "
    "tick 'no errors'.",
    "esa_mqm": "Mark every error span with its MQM category and severity, then score the "
    "translation from 0 (no meaning kept) to 100 (perfect).",
    "translation": "Translate each text as you would for publication: keep its meaning, tone "
    "and every detail.",
}
# Campaign names are what annotators see on the sign-up and annotation pages: words, not codes.
TASK_NAMES = {"esa": "ESA", "mqm": "MQM", "esa_mqm": "ESA+MQM", "translation": "translation task"}
NON_SCORABLE_HINT = (
    " If a text cannot be judged at all (not a text, untranslatable), tick 'cannot be scored' "
    "and say why."
)


class SendError(ValueError):
    """A send that cannot be done as asked; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)

    @property
    def errors(self) -> dict[str, str]:
        return {self.field: str(self)}


@dataclass(frozen=True)
class Ref:
    purpose: str
    run: int
    chain: int
    step: int
    system: str


def parse_ref(origin_ref: str) -> Ref | None:
    match = _REF.fullmatch(origin_ref)
    if match is None:
        return None
    purpose, run, chain, step, system = match.groups()
    return Ref(purpose, int(run), int(chain), int(step), system or "")


def _ref(purpose: str, chain: BreakerChain, step: int, system: str = "") -> str:
    ref = f"{purpose}/run{chain.run_id}/chain{chain.index}/step{step}"
    return f"{ref}/{system}" if system else ref


# --- Sending -------------------------------------------------------------------------------------


def _check(runs: list[BreakerRun], protocol: str, overlap: Any) -> int:
    if protocol not in (*SCORING_PROTOCOLS, TRANSLATION_PROTOCOL):
        known = ", ".join((*SCORING_PROTOCOLS, TRANSLATION_PROTOCOL))
        raise SendError("protocol", f"unknown protocol {protocol!r}; use one of {known}")
    if isinstance(overlap, bool) or not isinstance(overlap, int | str):
        raise SendError("overlap", "overlap must be a whole number")
    try:
        value = int(overlap)
    except ValueError:
        raise SendError("overlap", "overlap must be a whole number") from None
    if not 1 <= value <= MAX_OVERLAP:
        raise SendError("overlap", f"overlap must be from 1 to {MAX_OVERLAP}")
    unfinished = [r.pk for r in runs if r.status != BreakerRun.Status.FINISHED]
    if unfinished:
        raise SendError("run", f"only finished runs can be sent; not finished: {unfinished}")
    if len({(r.src_lang, r.tgt_lang) for r in runs}) > 1:
        raise SendError("run", "the runs translate different language pairs")
    return value


def _selected(runs: list[BreakerRun]) -> list[tuple[BreakerRun, BreakerChain, BreakerStep]]:
    by_pk = {run.pk: run for run in runs}
    chains = (
        BreakerChain.objects.filter(run__in=runs, selected_step__isnull=False)
        .order_by("run_id", "index")
        .only("pk", "run_id", "index", "selected_step")
    )
    steps: dict[tuple[int, int | None], BreakerStep] = {
        (s.chain_id, s.index): s
        for s in BreakerStep.objects.filter(chain__in=chains).only(
            "pk", "chain_id", "index", "source", "translations", "qe", "human_translations"
        )
    }
    picked = []
    for chain in chains:
        step = steps.get((chain.pk, chain.selected_step))
        if step is not None:
            picked.append((by_pk[chain.run_id], chain, step))
    return picked


def qe_of(step: BreakerStep, system: str) -> float | None:
    scores = list((step.qe.get(system) or {}).values())
    return round(fmean(scores), 6) if scores else None


def _score_items(picked) -> list[dict[str, Any]]:
    items = []
    for run, chain, step in picked:
        systems = {t: step.translations.get(t, "") for t in run.targets}
        systems |= {name: entry["text"] for name, entry in sorted(step.human_translations.items())}
        for system, translation in systems.items():
            if not translation.strip():
                continue  # a target that failed on this step: nothing to judge
            items.append(
                {
                    "doc_id": f"breaker-run{run.pk}-chain{chain.index}",
                    "seg_id": str(step.index),
                    "source": step.source,
                    "target": translation,
                    "system": system,
                    "origin": ORIGIN,
                    "origin_ref": _ref("score", chain, step.index, system),
                    "meta": {
                        "run": run.pk,
                        "method": run.method,
                        "chain": chain.index,
                        "step": step.index,
                        "qe": qe_of(step, system),
                    },
                }
            )
    return items


def _translation_items(picked) -> list[dict[str, Any]]:
    return [
        {
            "doc_id": f"breaker-run{run.pk}-chain{chain.index}",
            "seg_id": str(step.index),
            "source": step.source,
            "origin": ORIGIN,
            "origin_ref": _ref("translate", chain, step.index),
            "meta": {"run": run.pk, "method": run.method, "chain": chain.index, "step": step.index},
        }
        for run, chain, step in picked
    ]


def _campaign_name(runs: list[BreakerRun], protocol: str) -> str:
    scope = f"comparison “{runs[0].comparison}”" if len(runs) > 1 else f"run #{runs[0].pk}"
    base = f"MT-breaker {scope}: {TASK_NAMES[protocol]}"[:180]
    name, number = base, 1
    while Campaign.objects.filter(name=name).exists():
        number += 1
        name = f"{base} ({number})"
    return name


def send_to_annotation(
    runs: list[BreakerRun], *, protocol: str, overlap: Any = 1, created_by=None
) -> Campaign:
    """A new campaign with the selected texts of ``runs`` (see the module docstring).

    Raises :class:`SendError` (nothing written) for an unknown protocol, a bad overlap,
    an unfinished run, runs of different language pairs or nothing to send.
    """
    value = _check(runs, protocol, overlap)
    picked = _selected(runs)
    translating = protocol == TRANSLATION_PROTOCOL
    items = _translation_items(picked) if translating else _score_items(picked)
    if not items:
        raise SendError("run", "the run has no selected text with a translation to send")
    instructions = INSTRUCTIONS[protocol]
    if get_protocol(protocol).allows_non_scorable:
        instructions += NON_SCORABLE_HINT
    purpose = BreakerCampaign.Purpose.TRANSLATE if translating else BreakerCampaign.Purpose.SCORE
    with transaction.atomic():
        try:
            campaign = create_campaign(
                _campaign_name(runs, protocol),
                protocol,
                items,
                overlap=value,
                src_lang=runs[0].src_lang,
                tgt_lang=runs[0].tgt_lang,
                instructions=instructions,
            )
        except CampaignImportError as exc:  # our own items: a bug, but say which one
            raise SendError("run", f"could not build the campaign: {exc}") from exc
        BreakerCampaign.objects.bulk_create(
            [BreakerCampaign(run=r, campaign=campaign, purpose=purpose, created_by=created_by)
             for r in runs]
        )  # fmt: skip
    return campaign


# --- Receiving -----------------------------------------------------------------------------------


def on_item_completed(sender, item: Item, **kwargs) -> None:
    """Re-read the campaign of a breaker item that just got all its judgments.

    The whole campaign, not only the item: QC verdicts change as annotators work (an annotator
    who passed after two items fails the time rule after five), so every completion brings
    every stored result back in line with who passes now. Breaker campaigns are small (chains
    × systems) and unchanged results write nothing.
    """
    if item.origin != ORIGIN or parse_ref(item.origin_ref) is None:
        return
    record_results(item.campaign)


def record_results(campaign: Campaign) -> int:
    """Store the complete results of ``campaign``'s breaker items; returns how many items
    changed a step. Idempotent: a result is keyed by its campaign.

    An item none of whose judgments counts (every annotator failed QC, or is still pending)
    has no result: one stored before (its annotator passed then) is withdrawn, and the
    automatic quality is what remains.
    """
    complete = [
        (ref, result)
        for result in item_results(campaign, origin=ORIGIN)
        if result.complete and (ref := parse_ref(result.origin_ref)) is not None
    ]
    current = _steps_of([ref for ref, _ in complete])
    changed = 0
    for ref, result in complete:
        step = current.get((ref.run, ref.chain, ref.step))
        # Checked on an unlocked copy first: an unchanged result costs no lock and no write.
        if step is not None and _apply(step, campaign, ref, result):
            changed += _record(campaign, ref, result)
    return changed


def _steps_of(refs: list[Ref]) -> dict[tuple[int, int, int], BreakerStep]:
    """The steps ``refs`` point to, keyed by (run, chain index, step index), in one query."""
    if not refs:
        return {}
    rows = BreakerStep.objects.filter(
        chain__run_id__in={r.run for r in refs}, index__in={r.step for r in refs}
    ).select_related("chain")
    return {
        (s.chain.run_id, s.chain.index, s.index): s
        for s in rows.only(
            "pk", "index", "human", "human_translations", "chain__run_id", "chain__index"
        )
    }


def _apply(step: BreakerStep, campaign: Campaign, ref: Ref, result: ItemResult) -> bool:
    """Put ``result`` on ``step`` in memory; whether anything changed."""
    if ref.purpose == "translate":
        return _set_translations(step, campaign, result)
    return _set_score(step, campaign, ref.system, result)


def _record(campaign: Campaign, ref: Ref, result: ItemResult) -> int:
    with transaction.atomic():
        step = (
            BreakerStep.objects.select_for_update(of=("self",))
            .filter(chain__run_id=ref.run, chain__index=ref.chain, index=ref.step)
            .select_related("chain", "chain__run")
            .first()
        )
        if step is None:
            return 0  # the run was deleted since
        updated = _apply(step, campaign, ref, result)
        if updated:
            step.save(update_fields=["human", "human_translations"])
            _update_chain(step)
    return int(updated)


def _categories(result: ItemResult) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for judgment in result.counted:
        for span in judgment.answer.get("spans", []):
            if span.get("category"):
                counts[mqm_label(span)] += 1  # "Accuracy/Mistranslation", as Table 11
    return dict(sorted(counts.items()))


def _set_score(step: BreakerStep, campaign: Campaign, system: str, result: ItemResult) -> bool:
    per_campaign = step.human.setdefault(system, {})
    key = str(campaign.pk)
    if result.n_judgments == 0:
        if key not in per_campaign:
            return False
        del per_campaign[key]
        return True
    entry = {
        "protocol": campaign.protocol,
        "score": result.mean_score,
        "judgments": result.n_judgments,
        "non_scorable": result.n_non_scorable,
        "categories": _categories(result)
        if get_protocol(campaign.protocol).uses_mqm_weights
        else None,
    }
    if per_campaign.get(key) == entry:
        return False
    per_campaign[key] = entry
    return True


def _set_translations(step: BreakerStep, campaign: Campaign, result: ItemResult) -> bool:
    """The counted translations of ``campaign`` as systems ``Human``, ``Human 2``...; a
    translation whose annotator no longer passes QC is withdrawn."""
    counted = {j.annotator: j for j in result.counted}
    before = dict(step.human_translations)
    for name, entry in before.items():
        if entry["campaign"] == campaign.pk and entry["annotator"] not in counted:
            del step.human_translations[name]
    known = {e["annotator"] for e in before.values() if e["campaign"] == campaign.pk}
    for annotator, judgment in counted.items():
        if annotator in known:
            continue
        number = _next_human_number(step)
        name = HUMAN_SYSTEM if number == 1 else f"{HUMAN_SYSTEM} {number}"
        step.human_translations[name] = {
            "text": judgment.answer.get("translation", ""),
            "campaign": campaign.pk,
            "annotator": annotator,
        }
    return step.human_translations != before


def _next_human_number(step: BreakerStep) -> int:
    numbers = [
        1 if name == HUMAN_SYSTEM else int(name.rsplit(" ", 1)[1])
        for name in step.human_translations
    ]
    return max(numbers, default=0) + 1


def human_score(step: BreakerStep, system: str) -> float | None:
    """The step's human score for ``system``: the mean over the campaigns that scored it."""
    scores = [e["score"] for e in step.human.get(system, {}).values() if e["score"] is not None]
    return fmean(scores) if scores else None


def _update_chain(step: BreakerStep) -> None:
    chain = step.chain
    if chain.selected_step != step.index:
        return  # results for a step that is no longer the selected one stay on the step
    scores = [s for t in chain.run.targets if (s := human_score(step, t)) is not None]
    chain.human_quality = round(fmean(scores), 6) if scores else None
    chain.save(update_fields=["human_quality", "updated_at"])


def refresh_human_results(runs: list[BreakerRun]) -> int:
    """Read every campaign the runs were sent to again (an annotator whose QC verdict was
    pending when an item completed may pass later); returns how many items changed a step."""
    campaign_ids = set(
        BreakerCampaign.objects.filter(run__in=runs).values_list("campaign_id", flat=True)
    )
    return sum(
        record_results(campaign) for campaign in Campaign.objects.filter(pk__in=campaign_ids)
    )
