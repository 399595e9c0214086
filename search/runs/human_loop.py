"""Humans in the loop of a search run (seed 000 §2, DESIGN.md §4/§6).

* ``replace``: chosen pulls go to an ESA campaign; once a pull's items are complete its human
  difficulty (100 − mean ESA score) replaces the automatic one in the bandit.
* ``calibrate``: the same pairs fit an isotonic map automatic → human difficulty, applied to
  every automatic estimate of the run; agreement with humans is reported before and after,
  the after-figures cross-validated (each pair judged by a map fitted without it).

Which pulls go: rule ``top_k`` (texts of the current top-k topics, ``per_topic`` each),
``fraction`` (a random share of each round) or ``boundary`` (``per_topic`` texts of each topic
whose check could still move it across the top-k boundary, ``search.bandit.boundary``).

Annotation stays unaware of search: items carry ``origin="search"`` and
``origin_ref="pull:<id>:<translator>"``; :func:`on_item_completed` is connected to
``annotation.signals.item_completed`` in ``SearchConfig.ready``.

The bandit state is only changed by whoever holds the run (a round in its commit, or
``run_services.settle`` when no round is in flight): receivers just mark pulls ``received``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable

import numpy as np
from django.db import transaction

import rounds
from annotation.models import Campaign, Item
from annotation.selectors import ItemResult, item_results
from annotation.services.campaigns import add_items, create_campaign
from difficulty.calibration import (
    Calibration,
    agreement,
    cross_validated_predictions,
    fit_calibration,
)
from difficulty.dec import dec_from_arrays
from search.bandit.base import Policy
from search.bandit.boundary import topics_to_check
from search.models import Pull, SearchRun

__all__ = [
    "ORIGIN",
    "apply_received",
    "current_calibration",
    "on_item_completed",
    "outstanding",
    "send_chosen",
    "send_pulls",
]

logger = logging.getLogger(__name__)

ORIGIN = "search"
CV_STREAM = 11  # the calibration's folds: a random stream of the run's seed of its own
SETTLE_TASK = "search.settle_search_run"  # queued by name: services never import tasks
ESA_INSTRUCTIONS = (
    "These texts were chosen by a search for difficult topics. Mark every error span in the "
    "translation (minor or major), then score how much of the meaning the translation keeps: "
    "0 none, 33 some, 66 most, 100 all of it with perfect grammar."
)


def _identity(value: float) -> float:
    return value


def current_calibration(run: SearchRun) -> Callable[[float], float]:
    """What an automatic difficulty becomes when it enters the bandit."""
    if run.human_mode != SearchRun.HumanMode.CALIBRATE or not run.calibration.get("x"):
        return _identity
    mapping = Calibration.from_dict(run.calibration)
    return lambda value: float(mapping.apply(np.array([value]))[0])


def outstanding(run: SearchRun) -> bool:
    return Pull.objects.filter(run=run, human_status=Pull.HumanStatus.SENT).exists()


# --- Sending -------------------------------------------------------------------------------------


def send_chosen(run: SearchRun, policy: Policy, round_index: int) -> int:
    """Send the pulls the run's rule picks this round; returns how many pulls were sent."""
    if run.human_mode == SearchRun.HumanMode.OFF:
        return 0
    settings = run.human_settings
    sent = Pull.objects.filter(run=run).exclude(human_status="").count()
    room = int(settings["max_items"]) - sent
    if room <= 0:
        return 0
    fresh = Pull.objects.filter(run=run, human_status="").exclude(translations={})
    if settings["rule"] == "fraction":
        chosen = _fraction_of_round(run, fresh.filter(round_index=round_index), settings)
    elif settings["rule"] == "boundary":
        chosen = _boundary_samples(run, policy, fresh, int(settings["per_topic"]))
    else:
        chosen = _top_k_samples(run, policy, fresh, int(settings["per_topic"]))
    return send_pulls(run, chosen[:room])


def _fraction_of_round(run: SearchRun, pulls, settings: dict) -> list[Pull]:
    pulls = list(pulls.order_by("slot"))
    count = round(float(settings["fraction"]) * len(pulls))
    rng = np.random.default_rng([run.seed & 0x7FFFFFFF, run.round_index, 7])
    picked = sorted(rng.choice(len(pulls), size=count, replace=False)) if count else []
    return [pulls[i] for i in picked]


def _top_k_samples(run: SearchRun, policy: Policy, fresh, per_topic: int) -> list[Pull]:
    top = [int(arm) for arm in policy.top_k()]
    already: defaultdict[int, int] = defaultdict(int)
    for arm in (
        Pull.objects.filter(run=run, arm__in=top)
        .exclude(human_status="")
        .values_list("arm", flat=True)
    ):
        already[arm] += 1
    chosen = []
    for pull in fresh.filter(arm__in=top).order_by("arm", "id"):
        if already[pull.arm] < per_topic:
            already[pull.arm] += 1
            chosen.append(pull)
    return chosen


def _boundary_samples(run: SearchRun, policy: Policy, fresh, per_topic: int) -> list[Pull]:
    """Up to ``per_topic`` texts of each topic a human check could move across the top-k
    boundary (``search.bandit.boundary``), likeliest first, at most k topics a round: each
    round's answers sharpen the gap before the next round spends more."""
    sent = Pull.objects.filter(run=run).exclude(human_status="").values_list("arm", flat=True)
    judged = list(
        Pull.objects.filter(run=run, human_difficulty__isnull=False).values_list(
            "arm", "automatic_difficulty", "human_difficulty"
        )
    )
    entering = current_calibration(run)  # the gap is measured on the scale the bandit sees
    order = topics_to_check(
        policy,
        np.fromiter(sent, dtype=np.int64),
        np.array([arm for arm, _, _ in judged], dtype=np.int64),
        np.array([entering(automatic) for _, automatic, _ in judged], dtype=np.float64),
        np.array([human for _, _, human in judged], dtype=np.float64),
    )[: policy.k]
    by_arm: defaultdict[int, list[Pull]] = defaultdict(list)
    for pull in fresh.filter(arm__in=order.tolist()).order_by("arm", "id"):
        if len(by_arm[pull.arm]) < per_topic:
            by_arm[pull.arm].append(pull)
    return [pull for arm in order.tolist() for pull in by_arm[arm]]


def _campaign_for(run: SearchRun, first_items: list[dict]) -> Campaign:
    name = f"Search run #{run.pk}: {run.name}"[:200]
    campaign = create_campaign(
        name,
        "esa",
        first_items,
        overlap=int(run.human_settings.get("overlap", 1)),
        src_lang=run.src_lang,
        tgt_lang=run.tgt_lang,
        instructions=ESA_INSTRUCTIONS,
    )
    run.campaign = campaign
    run.save(update_fields=["campaign", "updated_at"])
    return campaign


def _items_of(run: SearchRun, pulls: Iterable[Pull]) -> list[dict]:
    items = []
    for pull in pulls:
        for translator, translation in sorted(pull.translations.items()):
            items.append(
                {
                    "doc_id": f"run{run.pk}-arm{pull.arm}",
                    "seg_id": str(pull.pk),
                    "source": pull.text,
                    "target": translation,
                    "system": translator,
                    "origin": ORIGIN,
                    "origin_ref": f"pull:{pull.pk}:{translator}",
                    "meta": {"run": run.pk, "topic": pull.topic.path if pull.topic else ""},
                }
            )
    return items


def send_pulls(run: SearchRun, pulls: list[Pull]) -> int:
    """Create ESA items for ``pulls`` (one per translation) in the run's campaign."""
    pulls = [p for p in pulls if p.translations and p.human_status == ""]
    if not pulls:
        return 0
    items = _items_of(run, pulls)
    with transaction.atomic():
        campaign = run.campaign  # no query when campaign_id is None
        if campaign is None:
            _campaign_for(run, items)
        else:
            add_items(campaign, items)
        Pull.objects.filter(pk__in=[p.pk for p in pulls]).update(human_status=Pull.HumanStatus.SENT)
    return len(pulls)


# --- Receiving -------------------------------------------------------------------------------


def _pull_id(item: Item) -> int | None:
    return _ref_pull_id(item.origin_ref) if item.origin == ORIGIN else None


def _ref_pull_id(origin_ref: str) -> int | None:
    parts = origin_ref.split(":")
    if len(parts) < 3 or parts[0] != "pull" or not parts[1].isdigit():
        return None
    return int(parts[1])


def on_item_completed(sender, item: Item, **kwargs) -> None:
    """Record a pull's human scores once all its items are complete; then settle the run."""
    pull_id = _pull_id(item)
    if pull_id is None:
        return
    pull = Pull.objects.filter(pk=pull_id, human_status=Pull.HumanStatus.SENT).first()
    if pull is None:
        return  # already received (a revision re-sent the signal) or not ours any more
    results = item_results(item.campaign, origin=ORIGIN, origin_ref_prefix=f"pull:{pull_id}:")
    if _receive(pull_id, list(results)):
        rounds.enqueue(SETTLE_TASK, (pull.run_id,))


def _receive(pull_id: int, results: list[ItemResult]) -> bool:
    """Mark a sent pull received with its per-translator mean scores; False while any of its
    items is incomplete or has no score from an annotator who passes quality control (then
    the automatic difficulty stays until a later read or the run's human deadline)."""
    if not results or any(not r.complete or r.mean_score is None for r in results):
        return False
    per_translator = {r.system: r.mean_score for r in results if r.mean_score is not None}
    human = 100.0 - float(np.mean(list(per_translator.values())))
    return bool(
        Pull.objects.filter(pk=pull_id, human_status=Pull.HumanStatus.SENT).update(
            human_status=Pull.HumanStatus.RECEIVED,
            human_difficulty=human,
            human_scores=per_translator,
        )
    )


def _receive_sent(run: SearchRun) -> None:
    """Read again the pulls still waiting for humans: a judgment left out when its item
    completed (its annotator's QC verdict was pending) counts once the annotator passes."""
    campaign = run.campaign
    if run.human_mode == SearchRun.HumanMode.OFF or campaign is None:
        return
    sent = set(
        Pull.objects.filter(run=run, human_status=Pull.HumanStatus.SENT).values_list(
            "pk", flat=True
        )
    )
    if not sent:
        return
    by_pull: defaultdict[int, list[ItemResult]] = defaultdict(list)
    for result in item_results(campaign, origin=ORIGIN):
        pull_id = _ref_pull_id(result.origin_ref)
        if pull_id is not None and pull_id in sent:
            by_pull[pull_id].append(result)
    for pull_id, results in by_pull.items():
        _receive(pull_id, results)


# --- Applying --------------------------------------------------------------------------------


def apply_received(run: SearchRun, policy: Policy) -> int:
    """Feed human scores that arrived into ``policy`` (the caller holds the run)."""
    # No ORDER BY: Pull's model ordering made SQLite walk every pull of the run in
    # (run, round, slot) order instead of seeking the (run, human_status) index (issue 19).
    _receive_sent(run)
    received = list(
        Pull.objects.filter(run=run, human_status=Pull.HumanStatus.RECEIVED).order_by("pk")
    )
    if not received:
        return 0
    if run.human_mode == SearchRun.HumanMode.REPLACE:
        _replace(policy, received)
    elif run.human_mode == SearchRun.HumanMode.CALIBRATE:
        _recalibrate(run, policy)
    Pull.objects.filter(pk__in=[p.pk for p in received]).update(
        human_status=Pull.HumanStatus.APPLIED
    )
    return len(received)


def _replace(policy: Policy, received: list[Pull]) -> None:
    arms = np.array([p.arm for p in received], dtype=np.int64)
    old = np.array([p.difficulty for p in received])
    new = np.array([p.human_difficulty for p in received])
    policy.revise(arms, old, new)
    for pull in received:
        assert pull.human_difficulty is not None  # received: the human score is in
        pull.difficulty = pull.human_difficulty
    Pull.objects.bulk_update(received, ["difficulty"], batch_size=1000)


def _recalibrate(run: SearchRun, policy: Policy) -> None:
    """Refit the map on every pair so far and move every pull of the run onto it."""
    judged = list(Pull.objects.filter(run=run, human_difficulty__isnull=False))
    auto = np.array([p.automatic_difficulty for p in judged])
    human = np.array([p.human_difficulty for p in judged])
    mapping = fit_calibration(auto, human)
    # Scored on held-out pairs: on its own training pairs the map looks better than it is.
    held = cross_validated_predictions(
        auto, human, np.random.default_rng([run.seed & 0x7FFFFFFF, CV_STREAM])
    )
    run.calibration = {
        **mapping.to_dict(),
        "before": _agreement_report(judged, auto),
        "after_cross_validated": {
            **_agreement_report(judged, held.predictions),
            "folds": held.n_folds,
            "method": held.method,
        },
    }
    pulls = list(
        Pull.objects.filter(run=run).only("pk", "arm", "automatic_difficulty", "difficulty")
    )
    new = mapping.apply(np.array([p.automatic_difficulty for p in pulls]))
    old = np.array([p.difficulty for p in pulls])
    changed = np.flatnonzero(new != old)
    if changed.shape[0]:
        policy.revise(np.array([pulls[i].arm for i in changed]), old[changed], new[changed])
        for i in changed:
            pulls[i].difficulty = float(new[i])
        Pull.objects.bulk_update([pulls[i] for i in changed], ["difficulty"], batch_size=1000)


def _agreement_report(judged: list[Pull], estimate: np.ndarray) -> dict:
    """Kendall tau and MAE against human difficulty, and DEC over the translators' scores.

    DEC (seed 002 Eq. 1) compares a quality-like estimate with each system's human score, so
    the estimate is negated difficulty and each translator is a system.
    """
    summary = agreement(estimate, np.array([p.human_difficulty for p in judged]))
    cells = [
        (-float(value), score, system)
        for pull, value in zip(judged, estimate, strict=True)
        for system, score in pull.human_scores.items()
    ]
    dec_value = None
    if len(cells) >= 2:
        quality, scores, systems = zip(*cells, strict=True)
        try:
            result = dec_from_arrays(
                quality, scores, systems, ["run"] * len(cells), with_pearson=False
            )
            dec_value = None if result.dec is None or np.isnan(result.dec) else float(result.dec)
        except ValueError as exc:  # systems judged on different pulls: no DEC grouping
            logger.info("DEC not computable for calibration report: %s", exc)
    return {
        "kendall_tau": summary.kendall_tau,
        "mae": summary.mean_abs_error,
        "dec": dec_value,
        "n_pairs": summary.n_pairs,
    }
