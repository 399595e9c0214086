"""Allocation policies, the stopping rule and the replay simulator on tiny hand-made grids."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import allocation as al
from ranking import replay as rp


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def judged(scores: np.ndarray, mask: np.ndarray, cap: int = 1) -> al.AllocationState:
    counts = mask.astype(np.intp)
    return al.AllocationState(counts, np.where(mask, scores, 0.0), cap=cap)


def test_uniform_is_balanced_over_systems_and_never_repeats_a_cell():
    state = al.AllocationState.empty(4, 10)
    cells = al.UniformPolicy().choose(state, rng(), 12)
    assert np.bincount(cells[:, 0], minlength=4).tolist() == [3, 3, 3, 3]
    assert len({tuple(c) for c in cells.tolist()}) == 12
    state.record(cells, np.ones(12))
    more = al.UniformPolicy().choose(state, rng(1), 28)  # exactly the 28 open cells are left
    assert len(more) == 28 and (state.counts[more[:, 0], more[:, 1]] == 0).all()
    assert al.UniformPolicy().choose(
        judged(np.ones((2, 2)), np.ones((2, 2), bool)), rng(), 3
    ).shape == (0, 2)


def test_uniform_segments_fills_one_segment_before_the_next():
    cells = al.SegmentUniformPolicy().choose(al.AllocationState.empty(3, 5), rng(), 5)
    segments = cells[:, 1].tolist()
    assert segments[0] == segments[1] == segments[2] and segments[3] == segments[4] != segments[0]


def test_pearmut_warms_up_then_draws_by_one_over_rank_plus_one():
    policy = al.PearmutPolicy(coldstart=2)
    scores = np.array([[90.0] * 6, [50.0] * 6, [70.0] * 6])
    warm = np.zeros((3, 6), bool)
    warm[:, :2] = True
    warm[1, 1] = False  # system 1 has one judgment: still in warm-up, only it can be drawn
    state = judged(scores, warm)
    assert policy.in_warmup(state)
    assert set(policy.choose(state, rng(), 1)[:, 0].tolist()) == {1}
    warm[1, 1] = True
    state = judged(scores, warm)
    assert not policy.in_warmup(state)
    # ranks: system 0 (90) first, 2 (70) second, 1 (50) third -> 1, 1/2, 1/3 normalised
    np.testing.assert_allclose(policy.weights(state), np.array([1, 1 / 3, 1 / 2]) / (11 / 6))
    generator = rng(1)
    draws = np.concatenate([policy.choose(state, generator, 1)[:, 0] for _ in range(3000)])
    shares = np.bincount(draws, minlength=3) / 3000  # standard errors about 0.009
    np.testing.assert_allclose(shares, np.array([6, 2, 3]) / 11, atol=0.04)


def test_settle_targets_the_unresolved_pair_at_the_top():
    generator = rng(3)
    n = 40
    base = generator.normal(70, 10, n)
    scores = np.vstack([base + 3 + generator.normal(0, 2, n), base + 2 + generator.normal(0, 2, n),
                        base - 20, base - 30])  # fmt: skip
    mask = np.zeros((4, n), bool)
    mask[:, :10] = True  # cold start done on 10 segments
    policy = al.SettlePolicy(goal="top", cold_segments=10, exploration=0.0)
    state = judged(scores, mask)
    pairs = policy.target_pairs(state)
    assert pairs and {pairs[0][0], pairs[0][1]} == {0, 1}
    cells = policy.choose(state, rng(), 6)
    assert set(cells[:, 0].tolist()) <= {0, 1}
    assert (state.counts[cells[:, 0], cells[:, 1]] < 1).all()  # never a cell at its cap


def test_settle_spends_on_a_clear_last_system_not_on_near_ties_at_the_top():
    # Three systems tied on average and one 4 points below, ten of 60 segments judged (the
    # en-cs shape in miniature): the probable top cluster is the three; of their pairs against
    # the last, those still open are the targets, and the ties inside it cost nothing.
    n = 60
    base = 70 + 10 * np.sin(np.arange(n))
    sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    scores = np.vstack([base, base + 3 * sign, base - 3 * sign, base - 4 + 8 * sign])
    mask = np.zeros((4, n), bool)
    mask[:, :10] = True
    state = judged(scores, mask)
    chance = al.pair_statistics(state).separation_probability(1.645)
    assert chance[0, 1] < 0.5 and chance[0, 2] < 0.5  # no boundary inside the top three
    assert chance[1, 3] > 0.95 and 0.5 < chance[2, 3] < chance[0, 3] < 0.95
    policy = al.SettlePolicy(goal="top", cold_segments=10, exploration=0.0)
    pairs = policy.target_pairs(state)
    assert [(upper, lower) for upper, lower, _ in pairs] == [(2, 3), (0, 3)]  # most open first
    cells = policy.choose(state, rng(), 8)
    assert set(cells[:, 0].tolist()) <= {0, 2, 3}


def test_the_separation_probability_counts_judgments_and_is_exact_when_complete():
    scores = np.array([[80.0, 72, 90, 75], [70.0, 70, 70, 70]])
    complete = al.pair_statistics(judged(scores, np.ones((2, 4), bool)))
    z = complete.z()[0, 1]
    assert complete.separation_probability(z - 0.1)[0, 1] == 1.0
    assert complete.separation_probability(z + 0.1)[0, 1] == 0.0
    # The same scores with one judgment of three a cell: two thirds of the information is
    # still to come, so the outcome is less certain than with one rater a cell.
    one_of_three = al.pair_statistics(judged(scores, np.ones((2, 4), bool), cap=3))
    assert 0.0 < one_of_three.separation_probability(z - 0.1)[0, 1] < 1.0
    never = al.AllocationState.empty(2, 2, available=np.array([[True, False], [False, True]]))
    assert al.pair_statistics(never).separation_probability(1.645)[0, 1] == 0.0


def test_the_weakest_cross_pair_of_every_boundary_in_one_pass():
    generator = rng(2)
    for n in range(2, 7):
        values = generator.random((n, n))
        expected = [values[: k + 1, k + 1 :].min() for k in range(n - 1)]
        np.testing.assert_allclose(al._block_minimum(values), expected)


def test_settle_prefers_completing_pairs_and_respects_per_cell_caps():
    scores = np.array([[80.0, 80, 80, 80], [70.0, 70, 70, 70]])
    counts = np.array([[1, 1, 1, 0], [1, 0, 1, 0]])
    caps = np.array([[1, 1, 1, 1], [1, 1, 1, 0]])  # cell (1, 3) cannot be judged at all
    state = al.AllocationState(counts, scores * counts, cap=caps)
    policy = al.SettlePolicy(cold_segments=0, exploration=0.0)
    cells = policy._pair_cells(state, state.open_cells(), state.counts, (0, 1), 1, rng())
    assert cells == [(1, 1)]  # completes the pair on segment 1 with one judgment
    # segment 3 cannot give a pair: only segment 1 is left for it
    assert policy._pair_cells(state, state.open_cells(), state.counts, (0, 1), 5, rng()) == [(1, 1)]
    everything = policy.choose(state, rng(), 10)
    assert (
        caps[everything[:, 0], everything[:, 1]] > counts[everything[:, 0], everything[:, 1]]
    ).all()


def test_the_prior_orders_the_cold_start():
    prior = np.array([[50.0, 90, 60], [50.0, 10, 55]])  # segment 1 spreads the systems most
    state = al.AllocationState.empty(2, 3, prior=prior)
    cells = al.SettlePolicy(cold_segments=3).choose(state, rng(), 2)
    assert cells[:, 1].tolist() == [1, 1]


def test_the_stopping_rule_fires_on_a_clear_winner_after_patience_checks():
    generator = rng(5)
    base = generator.normal(60, 15, 80)
    scores = np.vstack([base + 25, base, base + generator.normal(0, 1, 80), base - 1])
    state = judged(scores, np.ones((4, 80), bool))
    rule = al.StoppingRule(goal="top", patience=2, n_resamples=200)
    check = rule.check(state, rng())
    assert check.settled and check.signature == (0,)
    assert rule.update(state, rng()) is False  # one settled check is not yet stable
    assert rule.update(state, rng()) is True
    tied = judged(np.vstack([base, base + generator.normal(0, 5, 80)]), np.ones((2, 80), bool))
    assert al.StoppingRule(goal="top").check(tied, rng()).settled is False


def test_a_near_tie_with_too_few_judgments_is_not_out_of_reach():
    # Two systems far above a third, judged against it on many segments but against each other
    # on three: their z is small there, so the point projection in segments (z sqrt(N/n)) put
    # the pair out of reach and the top cluster settled; most of its judgments are still to
    # come, so it is not out of reach until they are in.
    n = 80
    generator = rng(3)
    base = generator.normal(60, 10, n)
    scores = np.vstack([base.copy(), base.copy(), base - 30 + generator.normal(0, 3, n)])
    scores[1, 37:40] = scores[0, 37:40] - np.array([1.0, -1.0, 0.5])
    mask = np.ones((3, n), bool)
    mask[0, 40:] = False  # system 0 judged on segments 0-39, system 1 on 37-79: three common
    mask[1, :37] = False
    stats = al.pair_statistics(judged(scores, mask))
    assert stats.n[0, 1] == 3 and stats.projected_z(0.0)[0, 1] < 1.645  # "out of reach" before
    assert 0.05 < stats.separation_probability(1.645)[0, 1] < 0.95
    assert al.StoppingRule(goal="top").check(judged(scores, mask), rng()).settled is False
    complete = np.ones((3, n), bool)  # with every judgment in, the tie is out of reach
    check = al.StoppingRule(goal="top").check(judged(scores, complete), rng())
    assert check.settled and check.signature == (0, 1)


def test_an_early_gap_must_cross_the_sequential_boundary():
    # System 0 over system 1 by z ~ 3.4 on a quarter of the segments: past alpha and past the
    # margin, but a campaign that looks after every batch sees such runs by chance; the
    # O'Brien-Fleming boundary asks z_{alpha/2} sqrt(4) = 3.92 here, 1.96 with all data in.
    generator = rng(11)
    base = generator.normal(60, 10, 80)
    scores = np.vstack([base + 5 + generator.normal(0, 6, 80), base])
    quarter = np.zeros((2, 80), bool)
    quarter[:, :20] = True
    early = judged(scores, quarter)
    assert 2.145 < al.pair_statistics(early).z()[0, 1] < 3.92
    assert al.StoppingRule(goal="top", sequential=False).check(early, rng()).settled
    assert not al.StoppingRule(goal="top").check(early, rng()).settled
    assert al.StoppingRule(goal="top").check(judged(scores, np.ones((2, 80), bool)), rng()).settled


def test_the_top_cluster_stability_is_one_for_a_clear_winner_and_less_near_alpha():
    def stability(scores: np.ndarray) -> float:
        data = rp.ReplayData(scores, ["a", "b", "c"])
        reference = rp.reference_ranking(data, n_resamples=200)
        return rp.top_cluster_stability(data, reference, draws=50, n_resamples=100)

    generator = rng(4)
    base = generator.normal(60, 10, 60)
    assert stability(np.vstack([base + 30, base + generator.normal(0, 5, 60), base])) == 1.0
    generator = rng(1)
    base = generator.normal(60, 10, 60)
    # "a" over the rest by 3 points with noise 10: significant on these 60 segments, not on
    # every resample of them.
    assert 0.3 < stability(np.vstack([base + 3 + generator.normal(0, 10, 60), base, base])) < 0.9


def test_a_replay_is_deterministic_under_its_seed():
    generator = rng(7)
    base = generator.normal(60, 10, 30)
    cube = np.stack([base + d + generator.normal(0, 8, (2, 30)) for d in (10, 5, 0, -5)])
    cube = np.moveaxis(cube, 1, 2)  # (systems, segments, 2 raters)
    data = rp.ReplayData(cube, ["a", "b", "c", "d"])
    reference = rp.reference_ranking(data, n_resamples=200)
    budgets = rp.checkpoint_budgets(data.total, 6)

    def run(name: str, seed: int) -> rp.PolicyTrace:
        rule = al.StoppingRule(n_resamples=50)
        return rp.replay(data, al.make_policy(name), seed, reference, budgets=budgets,
                         batch_size=5, stopping=rule)  # fmt: skip

    first, again, other = run("settle", 1), run("settle", 1), run("settle", 2)
    np.testing.assert_array_equal(first.tau, again.tau)
    np.testing.assert_array_equal(first.top, again.top)
    assert first.stop_budget == again.stop_budget
    assert not np.array_equal(first.tau, other.tau) or first.stop_budget != other.stop_budget
    assert first.budgets[-1] == data.total == 240
    assert first.top[-1]  # every score revealed: the full data's top cluster
    summary = rp.summarise([first, other])
    assert summary["settle"]["seeds"] == 2


@pytest.mark.parametrize("bad", [0, -1, True, np.ones((2, 2), dtype=float)])
def test_a_bad_cap_is_refused(bad):
    with pytest.raises(ValueError, match="cap"):
        al.AllocationState.empty(2, 3, cap=bad)


def test_an_unknown_policy_or_parameter_is_refused():
    with pytest.raises(ValueError, match="policy must be one of"):
        al.make_policy("greedy")
    with pytest.raises(ValueError, match="bad parameters"):
        al.make_policy("pearmut", warmth=3)
    with pytest.raises(ValueError, match="goal"):
        al.make_policy("settle", goal="best")


def test_the_chart_bands_stay_within_what_each_measure_can_be():
    budgets = np.array([10, 20])
    traces = [
        rp.PolicyTrace("settle", seed, budgets, tau=np.array([0.9, 1.0]),
                           top=np.array([seed == 0, True]), clusters=np.array([1, 1]))
        for seed in range(3)
    ]  # fmt: skip
    curve = rp.bands(traces)["settle"]
    assert curve["top"]["low"][0] == 0.0 and curve["top"]["high"][0] < 1.0
    assert curve["top"]["high"][1] == 1.0 and curve["tau"]["high"][1] == 1.0
    assert curve["clusters"]["low"] == [1.0, 1.0]
