"""The human loop's "boundary" rule: which topics a human check could move across the top-k."""

from __future__ import annotations

import numpy as np
import pytest

from search.bandit.boundary import PRIOR_SD, Evidence, Gap, boundary_topics, learn_gap
from search.runs.config import HUMAN_DEFAULTS, _human_settings_problem


def raw_mean(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    return np.asarray(sums, dtype=np.float64) / counts


def evidence(means, counts, checked, pairs=None, gap_sums=None) -> Evidence:
    n = len(means)
    counts = np.array(counts, dtype=np.int64)
    return Evidence(
        topics=np.arange(100, 100 + n),
        counts=counts,
        sums=np.array(means, dtype=np.float64) * counts,
        checked=np.array(checked, dtype=np.int64),
        pairs=np.zeros(n) if pairs is None else np.array(pairs, dtype=np.float64),
        gap_sums=np.zeros(n) if gap_sums is None else np.array(gap_sums, dtype=np.float64),
    )


def test_without_judgments_the_gap_is_the_prior():
    gap = learn_gap(np.empty(0), np.empty(0), np.empty(0, dtype=np.int64))
    assert gap.mean == 0.0 and gap.n == 0
    assert gap.between + gap.within == pytest.approx(PRIOR_SD**2)


def test_a_shared_blind_spot_is_learned_as_between_topic_variance():
    # Topic 1's texts are all 10 points harder for humans, topic 2's 10 easier: no spread within.
    topics = np.repeat([1, 2], 20)
    human = np.where(topics == 1, 10.0, -10.0)
    gap = learn_gap(np.zeros(40), human, topics)
    assert gap.mean == pytest.approx(0.0)
    assert gap.within < 10 < gap.between


def test_only_topics_a_check_could_move_across_the_boundary_are_in_play():
    # k = 2; the boundary lies between 50 and 40, at 45.
    e = evidence(
        means=[80, 50, 40, 10, 30],
        counts=[4, 4, 4, 4, 4],
        checked=[0, 0, 0, 0, 4],  # the last topic is human-checked through
    )
    chosen = boundary_topics(
        e, k=2, gap=Gap(mean=0.0, between=9.0, within=4.0, n=50), score=raw_mean
    )
    # Far above (80) and far below (10) stay out; 50 and 40 could cross (± 6.3 on the mean);
    # 30 is as far, but has nothing left to check.
    assert sorted(chosen.tolist()) == [101, 102]


def test_a_topic_whose_own_answers_say_it_will_fall_goes_first():
    # Topic 101 sits just inside the top-2, but its two answers were 20 points easier than QE.
    e = evidence(
        means=[80, 50, 40, 10], counts=[4, 10, 4, 4], checked=[0, 2, 0, 0],
        pairs=[0, 2, 0, 0], gap_sums=[0, -40, 0, 0],
    )  # fmt: skip
    chosen = boundary_topics(
        e, k=2, gap=Gap(mean=0.0, between=25.0, within=4.0, n=50), score=raw_mean
    )
    assert chosen[0] == 101


def test_nothing_is_in_play_while_at_most_k_topics_are_ranked():
    e = evidence(means=[50, 40], counts=[1, 1], checked=[0, 0])
    assert boundary_topics(e, k=2, gap=Gap(0.0, 100.0, 100.0, 0), score=raw_mean).size == 0


def test_the_boundary_rule_is_a_valid_human_setting_and_others_are_refused():
    assert _human_settings_problem({**HUMAN_DEFAULTS, "rule": "boundary"}) is None
    problem = _human_settings_problem({**HUMAN_DEFAULTS, "rule": "everything"})
    assert problem == "rule must be one of 'top_k', 'fraction', 'boundary'"
