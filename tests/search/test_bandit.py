"""search.bandit: every policy on tiny worlds, pending pulls, persistence, properties.

Pure numpy: no database, no Django.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search.bandit import (
    DEFAULT_POLICY,
    DEFAULT_RICH_BUDGET,
    DEFAULT_SWITCH,
    POLICIES,
    GridPrior,
    Neighbours,
    NormalPrior,
    Policy,
    default_choice,
    fit_prior,
    jaccard,
    make_policy,
    policy_from_dict,
    resolve_policy,
)
from search.bandit.candidates import HotSet, top_by_score
from search.bandit.codec import decode_array, decode_rng, encode_array, encode_rng
from search.bandit.ebucb import NOISY_SD, beta_for_noise
from search.bandit.halving import default_subset
from search.bandit.noise import NoiseProbes
from search.bandit.stats import ArmStats

ALL = sorted(POLICIES)
BEST = 7  # the one clearly difficult topic of the tiny world
N = 40


def tiny_means(n: int = N) -> np.ndarray:
    means = np.linspace(0.0, 10.0, n)
    means[BEST] = 60.0
    return means


def ring_keywords(n: int) -> list[set[str]]:
    """Topic t shares a keyword with t - 1 and t + 1."""
    return [{f"w{t}", f"w{(t + 1) % n}"} for t in range(n)]


def build(name: str, n: int = N, k: int = 3, seed: int = 0, **params: object) -> Policy:
    if name == "contextual" and "neighbours" not in params and "keywords" not in params:
        params["keywords"] = ring_keywords(n)
    if name == "sequential_halving" and "budget" not in params:
        params["budget"] = 6 * n
    return make_policy(name, n, k, np.random.default_rng(seed), **params)


def noisy(means: np.ndarray, sd: float, seed: int) -> Callable[[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    return lambda topics: means[topics] + sd * rng.standard_normal(topics.shape[0])


def drive(policy: Policy, score: Callable[[np.ndarray], np.ndarray], batch: int) -> list[list[int]]:
    """Run to the end; returns the selections made."""
    selections: list[list[int]] = []
    for _ in range(10_000):
        if policy.done:
            break
        topics = policy.select(batch)
        if topics.shape[0] == 0:
            break
        selections.append(topics.tolist())
        policy.update(topics, score(topics))
    return selections


# -- every method on a tiny world ---------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_finds_the_known_best_topic(name: str) -> None:
    policy = build(name, budget=6 * N, cap=6)
    drive(policy, noisy(tiny_means(), 1.0, seed=1), batch=4)
    assert policy.top_k()[0] == BEST


@pytest.mark.parametrize("name", ALL)
def test_top_k_has_k_distinct_topics_best_first(name: str) -> None:
    policy = build(name, k=5, budget=4 * N, recommend="empirical")
    drive(policy, noisy(tiny_means(), 2.0, seed=2), batch=8)
    top = policy.top_k()
    assert top.shape == (5,)
    assert len(set(top.tolist())) == 5
    means = policy.estimates(top).mean
    assert np.all(np.diff(means) <= 0)


@pytest.mark.parametrize("name", ["brute", "greedy", "epsilon_greedy", "contextual", "eb_ucb"])
def test_cap_is_respected(name: str) -> None:
    policy = build(name, n=10, k=2, budget=1_000, cap=3)
    drive(policy, noisy(tiny_means(10), 5.0, seed=3), batch=3)
    assert policy.stats.counts.max() <= 3
    # 10 topics x cap 3: the cap, not the budget, ends the run.
    assert policy.done
    assert policy.stats.n_scored == 30


@pytest.mark.parametrize("name", ALL)
def test_budget_is_never_exceeded_and_done_at_the_end(name: str) -> None:
    policy = build(name, budget=97)
    drive(policy, noisy(tiny_means(), 3.0, seed=4), batch=10)
    assert policy.stats.n_scored <= 97
    assert policy.remaining() == 97 - policy.stats.n_scored
    assert policy.done


@pytest.mark.parametrize("name", ALL)
def test_same_seed_same_selections(name: str) -> None:
    runs = [
        drive(build(name, budget=120, seed=9), noisy(tiny_means(), 3.0, seed=5), batch=7)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name", ALL)
def test_restored_policy_makes_identical_future_selections(name: str) -> None:
    original = build(name, budget=200, seed=3)
    score = noisy(tiny_means(), 3.0, seed=6)
    for _ in range(6):
        topics = original.select(9)
        original.update(topics, score(topics))
    pending = original.select(5)  # left pending across the save
    blob = json.dumps(original.to_dict())
    restored = policy_from_dict(json.loads(blob))
    assert type(restored) is type(original)
    assert restored.stats.n_pending == pending.shape[0]

    values = score(pending)
    original.update(pending, values)
    restored.update(pending, values)
    future = np.random.default_rng(0)
    for _ in range(8):
        a, b = original.select(9), restored.select(9)
        np.testing.assert_array_equal(a, b)
        values = future.normal(5.0, 3.0, a.shape[0])
        original.update(a, values)
        restored.update(b, values)
    np.testing.assert_array_equal(original.top_k(), restored.top_k())


def test_serialized_state_has_no_per_topic_python_objects() -> None:
    policy = build("default", n=200_000, k=10, budget=300_000)
    topics = policy.select(5_000)
    policy.update(topics, np.linspace(0, 30, topics.shape[0]))
    blob = json.dumps(policy.to_dict())
    # 5k scored topics and a first round of 150k topics: about a byte per scheduled topic once
    # compressed, nothing like a JSON list per topic.
    assert len(blob) < 250_000


# -- pending pulls ------------------------------------------------------------------------------


def test_pending_pulls_count_against_the_cap_and_are_not_reselected() -> None:
    policy = build("greedy", n=6, k=1, budget=100, cap=2)
    first = policy.select(6)  # explores all six
    policy.update(first, np.array([1.0, 2.0, 9.0, 3.0, 4.0, 5.0])[first])
    a = policy.select(2)
    b = policy.select(2)  # before a's scores arrive
    assert set(a.tolist()).isdisjoint(b.tolist())
    assert a[0] == 2  # the highest mean
    c = policy.select(6)  # every topic is at the cap once pending pulls count
    assert c.shape[0] == 2
    assert policy.select(1).shape[0] == 0
    assert not policy.done  # pending scores will arrive
    assert policy.remaining() == 100 - 12


def test_pending_fresh_topics_are_not_explored_twice() -> None:
    policy = build("epsilon_greedy", n=50, k=2, budget=100, epsilon=1.0)
    a = policy.select(20)
    b = policy.select(20)
    assert set(a.tolist()).isdisjoint(b.tolist())
    assert policy.stats.n_pending == 40


def test_halving_waits_for_the_round_to_be_scored() -> None:
    policy = build("sequential_halving", n=16, k=2, budget=64)
    first = policy.select(100)  # the whole first round
    assert first.shape[0] == policy.scheduled
    assert policy.select(10).shape[0] == 0
    assert not policy.done
    policy.update(first[:-1], np.ones(first.shape[0] - 1))
    assert policy.select(10).shape[0] == 0  # one score still missing
    policy.update(first[-1:], np.ones(1))
    assert policy.select(10).shape[0] > 0
    assert policy.round == 1


def test_halving_keeps_at_least_k_survivors() -> None:
    policy = build("sequential_halving", n=64, k=5, budget=640)
    drive(policy, noisy(tiny_means(64), 2.0, seed=8), batch=32)
    # The last round runs on fewer than 2k arms; the final cut to k is the recommendation.
    assert 5 <= policy.survivors.shape[0] < 10
    assert set(policy.top_k().tolist()) <= set(policy.survivors.tolist())
    assert policy.stats.n_scored == 640
    # 200 arms x ceil(log2(200 / 10)) = 5 rounds = 1000 pulls: one per arm in round one.
    assert default_subset(10**6, 10, 1000) == 200


def test_cancel_releases_pending_pulls() -> None:
    policy = build("eb_ucb", n=30, k=2, budget=40)
    topics = policy.select(10)
    policy.cancel(topics[:4])
    assert policy.stats.n_pending == 6
    assert policy.remaining() == 34
    again = policy.select(30)
    assert set(topics[:4].tolist()) <= set(again.tolist())


def test_unsolicited_scores_count_against_the_budget() -> None:
    policy = build("brute", n=10, k=2, budget=5)
    policy.update(np.array([3, 3, 4]), np.array([1.0, 2.0, 3.0]))
    assert policy.remaining() == 2
    assert policy.estimates(np.array([3])).count.tolist() == [2]


# -- recommendation and estimates ----------------------------------------------------------------


def test_posterior_recommendation_prefers_evidence_over_one_lucky_draw() -> None:
    rng = np.random.default_rng(0)
    n = 2_000
    policy = make_policy("brute", n, 1, rng, recommend="posterior", noise_sd=15.0)
    topics = np.arange(n)
    policy.update(topics, rng.normal(5.0, 15.0, n))  # one draw each: pure noise around 5
    policy.update(np.array([0, 1]), np.array([90.0, 40.0]))  # topic 1: two more draws
    policy.update(np.array([1, 1, 1, 1]), np.full(4, 40.0))
    assert policy.top_k()[0] == 1
    assert make_policy("brute", n, 1, rng).top_k().shape == (0,)


def test_estimates_for_a_subset() -> None:
    policy = build("eb_ucb", n=100, k=3, budget=300)
    drive(policy, noisy(tiny_means(100), 3.0, seed=10), batch=20)
    est = policy.estimates(np.array([BEST, 3]))
    assert est.topics.tolist() == [BEST, 3]
    assert est.count[0] > 0
    assert est.lower[0] <= est.posterior_mean[0] <= est.upper[0]
    full = policy.estimates()
    assert full.mean.shape == (100,)
    assert np.isnan(full.mean[policy.stats.counts == 0]).all()


def test_make_policy_names_and_default() -> None:
    assert set(POLICIES) >= {
        "brute",
        "greedy",
        "epsilon_greedy",
        "contextual",
        "sequential_halving",
        "eb_ucb",
    }
    default = make_policy("default", 10, 2, np.random.default_rng(0), budget=20)
    assert default.name == DEFAULT_POLICY[0]
    assert default_choice(DEFAULT_SWITCH - 1)[0] == "sequential_halving"
    large = make_policy("default", DEFAULT_SWITCH, 2, np.random.default_rng(0), budget=9)
    assert large.name == "eb_ucb"
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("nope", 10, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="budget"):
        make_policy("sequential_halving", 10, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="k must"):
        make_policy("brute", 10, 11, np.random.default_rng(0))


def test_update_validates_input() -> None:
    policy = build("greedy")
    with pytest.raises(ValueError, match="same length"):
        policy.update(np.array([1, 2]), np.array([1.0]))
    with pytest.raises(IndexError):
        policy.update(np.array([N]), np.array([1.0]))
    with pytest.raises(ValueError, match="finite"):
        policy.update(np.array([1]), np.array([np.nan]))


# -- contextual (seed 000 App. B.1) -------------------------------------------------------------


def test_jaccard_and_symmetric_neighbours() -> None:
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 0.0
    graph = Neighbours.from_keywords([{"a", "b"}, {"b", "c"}, {"x"}])
    assert graph.indptr.tolist() == [0, 1, 2, 2]
    assert graph.indices.tolist() == [1, 0]
    csr = Neighbours.from_csr(np.array([0, 1, 1, 1]), np.array([2]), np.array([0.5]))
    assert csr.indices.tolist() == [2, 0]


def test_contextual_scores_unpulled_topics_from_their_neighbours() -> None:
    # Topic 0 has neighbours 1 and 2; topic 3 has neighbours 4 and 5.
    lists = [[(1, 0.5), (2, 0.5)], [], [], [(4, 0.5), (5, 0.5)], [], []]
    policy = make_policy("contextual", 6, 1, np.random.default_rng(0), neighbours=lists, cap=3)
    policy.update(np.array([1, 2, 4, 5]), np.array([30.0, 20.0, 1.0, 2.0]))
    scores, eligible = policy._score(np.arange(6))
    assert eligible.tolist() == [True] * 6
    assert scores[0] == pytest.approx(25.0)  # equal similarities: plain mean of 30 and 20
    assert scores[3] == pytest.approx(1.5)
    assert policy.select(1).tolist() == [1]  # its own mean, 30, beats 0's neighbour score, 25
    policy.update(np.array([0]), np.array([10.0]))
    scores, _ = policy._score(np.array([0]))
    assert scores[0] == pytest.approx(0.5 * 10.0 + 0.5 * 25.0)  # beta = 0.5 after one pull


def test_contextual_explores_until_every_topic_is_scoreable() -> None:
    policy = build("contextual", n=12, k=1, budget=100, keywords=[{f"t{t}"} for t in range(12)])
    first = policy.select(12)  # no neighbours at all: everything must be pulled once
    assert sorted(first.tolist()) == list(range(12))


# -- building blocks ----------------------------------------------------------------------------


def test_codec_round_trip() -> None:
    arr = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(decode_array(json.loads(json.dumps(encode_array(arr)))), arr)
    rng = np.random.default_rng(5)
    rng.random(3)
    copy = decode_rng(json.loads(json.dumps(encode_rng(rng))))
    assert copy.random() == rng.random()


def test_normal_prior_shrinks_towards_the_population_mean() -> None:
    prior = NormalPrior(mean=10.0, var=4.0, noise_var=16.0)
    mean, var = prior.posterior(np.array([0, 1, 100]), np.array([0.0, 30.0, 3000.0]))
    assert mean[0] == 10.0 and var[0] == 4.0
    assert mean[1] == pytest.approx(10.0 + 0.2 * 20.0)
    assert 29.0 < mean[2] < 30.0


def test_grid_prior_fits_a_two_point_world() -> None:
    rng = np.random.default_rng(0)
    stats = ArmStats.zeros(20_000)
    mu = np.where(rng.random(20_000) < 0.1, 30.0, 0.0)
    stats.record(np.arange(20_000), mu + rng.normal(0.0, 5.0, 20_000))
    prior = fit_prior(stats, "grid", noise_sd=5.0)
    assert isinstance(prior, GridPrior)
    assert prior.mean == pytest.approx(3.0, abs=0.5)
    post, _ = prior.posterior(np.array([1, 1, 40]), np.array([30.0, 0.0, 1200.0]))
    assert post[0] > 25.0 and post[1] < 2.0 and post[2] == pytest.approx(30.0, abs=0.5)
    assert fit_prior(ArmStats.zeros(3), "grid") is None


def test_noise_probes_estimate_sigma_without_selection_bias() -> None:
    rng = np.random.default_rng(1)
    stats = ArmStats.zeros(3_000)
    probes = NoiseProbes(2_000)
    mu = rng.normal(0.0, 5.0, 3_000)
    first = probes.enrol(np.arange(2_000))
    stats.record(first, mu[first] + rng.normal(0.0, 15.0, 2_000))
    probes.after_record(stats)
    due = probes.due(5_000, stats)
    assert due.shape[0] == 2_000
    probes.before_record(due, stats)
    stats.record(due, mu[due] + rng.normal(0.0, 15.0, 2_000))
    probes.after_record(stats)
    assert probes.noise_sd() == pytest.approx(15.0, rel=0.05)


def test_top_by_score_breaks_ties_by_topic_id() -> None:
    topics, scores = top_by_score(np.array([9, 3, 5, 1]), np.array([1.0, 2.0, 2.0, 0.0]), 2)
    assert topics.tolist() == [3, 5]
    assert scores.tolist() == [2.0, 2.0]


def test_no_django_import() -> None:
    code = (
        "import sys, search.bandit, engines.offline.synthetic_world; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework')]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- properties ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(ALL),
    n=st.integers(2, 60),
    k=st.integers(1, 5),
    budget=st.integers(1, 200),
    batch=st.integers(1, 25),
    cap=st.one_of(st.none(), st.integers(1, 6)),
    seed=st.integers(0, 2**16),
)
def test_invariants_hold_for_any_run(
    name: str, n: int, k: int, budget: int, batch: int, cap: int | None, seed: int
) -> None:
    k = min(k, n)
    policy = build(name, n=n, k=k, seed=seed, budget=budget, cap=cap)
    rng = np.random.default_rng(seed)
    while True:
        topics = policy.select(batch)
        assert topics.shape[0] <= batch
        if topics.shape[0] == 0:
            break
        assert topics.min() >= 0 and topics.max() < n
        if cap is not None:
            assert (policy.stats.counts + policy.stats.pending).max() <= cap
        policy.update(topics, rng.normal(0.0, 10.0, topics.shape[0]))
    assert policy.done
    assert policy.stats.n_scored <= budget
    assert policy.stats.n_pending == 0
    assert policy.stats.counts.sum() == policy.stats.n_scored
    top = policy.top_k()
    assert top.shape[0] == min(k, int((policy.stats.counts > 0).sum()))
    assert len(set(top.tolist())) == top.shape[0]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 300),
    b=st.integers(1, 20),
    rounds=st.integers(1, 15),
    seed=st.integers(0, 2**16),
)
def test_hot_set_equals_a_full_scan(n: int, b: int, rounds: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 5, n).astype(np.float64)  # many ties on purpose
    eligible = rng.random(n) < 0.7
    hot = HotSet(n)

    def score(topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return scores[topics], eligible[topics]

    def universe() -> np.ndarray:
        return np.arange(n)

    for _ in range(rounds):
        got, _ = hot.top(b, score, universe)
        pool = np.flatnonzero(eligible)
        want, _ = top_by_score(pool, scores[pool], b)
        np.testing.assert_array_equal(got, want)
        changed = rng.choice(n, size=min(n, 5), replace=False)
        scores[changed] = rng.integers(0, 8, changed.shape[0])
        eligible[changed] = rng.random(changed.shape[0]) < 0.7
        hot.offer(changed, scores[changed], eligible[changed])


@pytest.mark.parametrize("name", ["epsilon_greedy", "sequential_halving", "eb_ucb", "greedy"])
def test_revise_replaces_a_score_without_spending_budget(name):
    policy = make_policy(name, 50, 3, np.random.default_rng(0), budget=200)
    topics = policy.select(20)
    scores = np.random.default_rng(1).normal(10.0, 5.0, topics.shape[0])
    scores[0] = 10.0
    policy.update(topics, scores)
    target = int(topics[0])
    before_left = policy.remaining()
    policy.revise(np.array([target]), np.array([10.0]), np.array([95.0]))
    est = policy.estimates(np.array([target]))
    assert est.count[0] == 1
    assert est.mean[0] == pytest.approx(95.0)
    assert policy.remaining() == before_left
    assert target in policy.top_k()
    restored = policy_from_dict(policy.to_dict())
    assert restored.estimates(np.array([target])).mean[0] == pytest.approx(est.mean[0])


def test_revise_rejects_unscored_topics_and_bad_shapes():
    policy = make_policy("greedy", 10, 2, np.random.default_rng(0), budget=20)
    with pytest.raises(ValueError, match="only scored"):
        policy.revise(np.array([3]), np.array([1.0]), np.array([2.0]))
    with pytest.raises(ValueError, match="same length"):
        policy.revise(np.array([3, 4]), np.array([1.0]), np.array([2.0]))


# -- the default at high per-text noise (issue 19, docs/adr/0028) --------------------------------


def test_beta_for_noise_switches_only_on_a_known_high_noise() -> None:
    assert beta_for_noise(None, 6.0, 3.0) == 6.0  # noise not estimated yet
    assert beta_for_noise(NOISY_SD - 0.01, 6.0, 3.0) == 6.0
    assert beta_for_noise(NOISY_SD, 6.0, 3.0) == 3.0
    assert beta_for_noise(40.0, 6.0, None) == 6.0  # no noisy beta: the old behaviour
    assert beta_for_noise(12.0, 6.0, 3.0, noisy_sd=10.0) == 3.0


def test_default_choice_by_size_and_budget_per_topic() -> None:
    assert default_choice(DEFAULT_SWITCH - 1)[0] == "sequential_halving"
    assert default_choice(DEFAULT_SWITCH - 1, budget=10 * DEFAULT_SWITCH)[0] == (
        "sequential_halving"
    )
    name, params = default_choice(DEFAULT_SWITCH)
    assert name == "eb_ucb" and params["beta_noisy"] == 3.0 and params["beta"] == 6.0
    n = 100_000
    rich = int(DEFAULT_RICH_BUDGET * n)
    assert default_choice(n, budget=rich - 1)[0] == "eb_ucb"
    assert default_choice(n, budget=rich) == ("sequential_halving", {"explore": 0.5, "eta": 3.0})
    assert default_choice(n, budget=None)[0] == "eb_ucb"


def test_make_policy_default_follows_the_budget() -> None:
    rng = np.random.default_rng(0)
    lean = make_policy("default", 40_000, 10, rng, budget=40_000)
    rich = make_policy("default", 40_000, 10, rng, budget=120_000)
    assert lean.name == "eb_ucb" and rich.name == "sequential_halving"
    assert resolve_policy("default", 40_000, {"beta": 4.0}, budget=40_000) == (
        "eb_ucb",
        {"beta": 4.0, "beta_noisy": 3.0, "explore": 0.67},
    )
    assert resolve_policy("greedy", 40_000, {"cap": 3}, budget=40_000) == ("greedy", {"cap": 3})


@pytest.mark.parametrize(("sd", "expected"), [(25.0, 3.0), (8.0, 6.0)])
def test_eb_ucb_lowers_beta_once_the_probes_measure_high_noise(sd: float, expected: float) -> None:
    n = 3_000
    policy = make_policy("eb_ucb", n, 5, np.random.default_rng(2), budget=3_000, beta_noisy=3.0)
    rng = np.random.default_rng(4)
    mu = rng.normal(10.0, 4.0, n)
    assert policy.beta_now == 6.0
    drive(policy, lambda t: mu[t] + sd * rng.standard_normal(t.shape[0]), batch=50)
    assert policy.probes.noise_sd() == pytest.approx(sd, rel=0.3)
    assert policy.beta_now == expected
    restored = policy_from_dict(json.loads(json.dumps(policy.to_dict())))
    assert restored.beta_now == expected and restored.params()["beta_noisy"] == 3.0


def test_eb_ucb_state_saved_before_beta_noisy_restores_with_beta() -> None:
    policy = build("eb_ucb", n=400, budget=400)
    drive(policy, noisy(tiny_means(400), 3.0, seed=1), batch=20)
    data = policy.to_dict()
    del data["state"]["beta_now"]
    for key in ("beta_noisy", "noisy_sd"):
        del data["params"][key]
    restored = policy_from_dict(data)
    assert restored.beta_now == 6.0 and restored.beta_noisy is None


def test_eb_ucb_rejects_bad_noise_settings() -> None:
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="beta"):
            build("eb_ucb", budget=100, beta_noisy=bad)
    with pytest.raises(ValueError, match="noisy_sd"):
        build("eb_ucb", budget=100, noisy_sd=0.0)
