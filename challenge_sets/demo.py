"""Demo challenge set for ``load_demo`` (runs last: it reads the demo search runs and datasets).

"Demo: hard texts" takes the hardest texts of the demo search runs' top topics, the two
hardest selected texts of each run of the demo MT-breaker comparison (8 methods; all 64 would
swamp the rest) and the hardest tenth of the synthetic difficulty dataset when they are there,
and sends those with translations to an ESA validation campaign that annotators can open at
once. Idempotent by set name.
"""

from __future__ import annotations

import contextlib
from typing import Any

from challenge_sets import services, validation
from challenge_sets.models import ChallengeSet
from challenge_sets.sources import SourceError
from difficulty.demo import DIFFICULTY_DEMO_NAME
from difficulty.models import DifficultyDataset
from search.breaker.demo import DEMO_COMPARISON
from search.models import SearchRun
from search.runs.demo import CORPUS_RUN, HUMAN_RUN

DEMO_SET = "Demo: hard texts"


def load_demo(stdout) -> None:
    if ChallengeSet.objects.filter(name=DEMO_SET).exists():
        return
    challenge_set = services.create_challenge_set(
        name=DEMO_SET,
        description="The hardest texts the demo searches and MT-breaker runs found, with their "
        "provenance.",
        licence="CC-BY-4.0",
        provenance_notes="Offline demo: corpus texts of the demo topic tree, WMT24 sources and "
        "texts the simulated MT-breaker comparison edited from that corpus.",
        policy={"protocol": "esa", "overlap": 1, "threshold": 30},
    )
    added = 0
    for run in SearchRun.objects.filter(
        name__in=(CORPUS_RUN, HUMAN_RUN), pulls_done__gt=0
    ).order_by("id"):
        params: dict[str, Any] = {"run": run.pk, "top_k": 2, "per_topic": 2}
        try:
            added += services.add_items_from_source(challenge_set, "search_run", params).added
        except SourceError as exc:
            stdout.write(f"challenge_sets: run {run.name!r} skipped: {exc}")
    try:
        params = {"comparison": DEMO_COMPARISON, "hardest": 2}
        added += services.add_items_from_source(challenge_set, "breaker_run", params).added
    except SourceError as exc:
        stdout.write(f"challenge_sets: breaker comparison skipped: {exc}")
    dataset = DifficultyDataset.objects.filter(name=DIFFICULTY_DEMO_NAME).first()
    if dataset is not None:
        params = {"dataset": dataset.pk, "fraction": 0.1}
        added += services.add_items_from_source(challenge_set, "difficulty_dataset", params).added
    sent = 0
    # No demo item may have a translation (the WMT24 data is absent): then nothing is sent.
    with contextlib.suppress(services.ChallengeSetError):
        sent, _ = validation.send_for_validation(challenge_set)
    stdout.write(f"challenge_sets: demo set {DEMO_SET!r} with {added} items, {sent} sent")
