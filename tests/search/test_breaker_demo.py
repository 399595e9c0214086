"""``load_demo``'s breaker comparison: every method on the offline world, finished, once."""

from __future__ import annotations

import time
from statistics import mean

from search.breaker.demo import DEMO_COMPARISON, load_breaker_demo
from search.demo import load_topic_demo
from search.models import BreakerRun
from tests.search.test_run_demo import Out


def test_the_demo_compares_every_method_and_mt_breaker_wins(db):
    out = Out()
    load_topic_demo(out)
    start = time.perf_counter()
    load_breaker_demo(out)
    assert time.perf_counter() - start < 20  # it runs inside `make run`
    runs = BreakerRun.objects.filter(comparison=DEMO_COMPARISON)
    assert runs.count() == 8 and set(runs.values_list("status", flat=True)) == {"finished"}
    quality = {
        run.method: mean(run.chains.values_list("selected_quality", flat=True)) for run in runs
    }
    assert quality["breaker_seeded"] < quality["seeds"]
    assert quality["breaker_seedless"] < min(
        quality["zeroshot"], quality["zeroshot_history"], quality["zeroshot_min"]
    )
    assert out.lines[-1] == f"search: breaker comparison {DEMO_COMPARISON!r} (8 methods)"
    load_breaker_demo(Out())
    assert BreakerRun.objects.count() == 8
