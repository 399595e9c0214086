"""The significance clusters of a DEC evaluation's estimators (seed 002 Tables 7–8).

An evaluation of several estimators plans one ``["significance", first, second, 0]`` unit per
pair of them (after their metrics): a PERM-BOTH test (:mod:`difficulty.dec_significance`) whose
counts are kept on the row's state under the unit's key. ``finish`` ranks the estimators from
those tests, overall and per language pair, into ``results["significance"]``.
"""

from __future__ import annotations

import itertools
import json
import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from difficulty import dec_significance as significance
from difficulty.dec import LanguagePairBlock

# One test costs about Σ n² multiply-adds per resample (n: a (pair, system) group's scored
# cells). Above this many, a test of 1000 resamples would take minutes (the whole WMT24 ESA test
# set is about 9 × 10⁷), so the evaluation leaves the clusters out and says why.
SIGNIFICANCE_MAX_WORK = 1_000_000_000


def plan_tests(names: Sequence[str], work: int) -> tuple[list[list], str | None]:
    """The test units for these estimators, or why there are none (None with one estimator)."""
    if len(names) < 2:
        return [], None
    if work > SIGNIFICANCE_MAX_WORK:
        tests = len(names) * (len(names) - 1) // 2
        return [], (
            f"significance clusters left out: {tests} permutation test{'s' * (tests > 1)} on "
            f"this dataset would take too long ({work:,} cell pairs per resample; at most "
            f"{SIGNIFICANCE_MAX_WORK:,})"
        )
    # The third field, a language pair in other units, names the second estimator here. Pairs
    # in name order: a pair's test does not depend on where its estimators sit in the list.
    return [["significance", a, b, 0] for a, b in itertools.combinations(sorted(names), 2)], None


def test_pair(
    seed: int,
    first: str,
    second: str,
    blocks_first: Sequence[LanguagePairBlock],
    blocks_second: Sequence[LanguagePairBlock],
) -> dict[str, Any]:
    """PERM-BOTH for two estimators on a generator of their own: the same seed and names draw
    the same swaps wherever the estimators sit in the list. JSON-ready."""
    names = (zlib.crc32(first.encode()), zlib.crc32(second.encode()))
    rng = np.random.default_rng([seed, *names, 3])
    # The products are a few hundred rows deep: a second BLAS thread gains little when the
    # machine is idle and, when it is busy, spins against the other work (5× the CPU time on the
    # 2-core development machine under load).
    with threadpool_limits(limits=1, user_api="blas"):
        test = significance.perm_both_pair(blocks_first, blocks_second, rng=rng)
    return test.as_dict()


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)


def estimator_clusters(
    state: dict[str, Any], names: Sequence[str], seed: int
) -> dict[str, Any] | None:
    """``results["significance"]``: the ranking from the tests on ``state``; only the reason
    when they were left out; None with one estimator or for a plan made before clusters."""
    if state.get("significance_skipped"):
        return {"method": significance.METHOD, "skipped": state["significance_skipped"]}
    stored = state.get("significance")
    if not stored:
        return None
    tests = {}
    for key, data in stored.items():
        _kind, first, second, _index = json.loads(key)
        tests[(first, second)] = significance.PairTest.from_dict(data)
    metrics = {name: state["metrics"][name]["dec"] for name in names}
    ranking = significance.rank_tests(
        {name: _number(m["dec"]) for name, m in metrics.items()},
        {n: {lp: _number(v) for lp, v in m["dec_per_lp"].items()} for n, m in metrics.items()},
        tests,
        significance.ALPHA,
    )
    return {
        "method": significance.METHOD,
        "follows": "Deutsch et al. (2021), PERM-BOTH; clusters as Freitag et al. (2024)",
        "n_resamples": significance.N_RESAMPLES,
        "early_stopping": {
            "block_size": significance.BLOCK_SIZE,
            "below": significance.EARLY_MIN,
            "above": significance.EARLY_MAX,
        },
        "alpha": significance.ALPHA,
        "seed": seed,
        **ranking.as_dict(),
    }


def ranks_of(clusters: dict[str, Any] | None) -> dict[str, int]:
    """Each ranked estimator's cluster rank (estimators with undefined DEC have none)."""
    if not clusters or "ranks" not in clusters:
        return {}
    return dict(zip(clusters["order"], clusters["ranks"], strict=True))
