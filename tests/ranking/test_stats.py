"""ranking.stats against scipy.stats, hand-made tables and the WMT22 lv-en release."""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections import defaultdict

import numpy as np
import pytest
from scipy import stats

from ranking import stats as rs

NAN = math.nan


def mean_difference(x, y, axis):
    return np.mean(x - y, axis=axis)


@pytest.fixture
def small():
    """Four systems x 20 segments of ESA-like integers: ties, zero differences, gaps."""
    rng = np.random.default_rng(7)
    base = rng.integers(40, 90, size=20)
    x = np.vstack([base + rng.integers(-6, 12, 20) for _ in range(4)]).astype(float)
    x[1] = x[0] - np.array([0, 0, 3, -1, 2, 5, 0, 4, 1, 3, 0, 2, 6, 1, 2, -2, 0, 3, 1, 1])
    x[2, [3, 9]] = NAN  # a system missing from some segments
    x[3, 0] = NAN
    return x


def common(x, i, j):
    both = ~np.isnan(x[i]) & ~np.isnan(x[j])
    return x[i, both], x[j, both]


# --- Wilcoxon signed-rank and rank-sum -----------------------------------------------------------


def test_wilcoxon_matches_scipy_on_common_segments(small):
    p = rs.wilcoxon_pvalues(small)

    for i, j in itertools.permutations(range(4), 2):
        a, b = common(small, i, j)
        expected = stats.wilcoxon(a, b, alternative="greater", zero_method="wilcox").pvalue
        assert p[i, j] == pytest.approx(expected, rel=1e-12), (i, j)
    assert np.isnan(np.diag(p)).all()


def test_wilcoxon_adjacent_tests_only_neighbours_in_the_given_order(small):
    order = np.array([2, 0, 3, 1])
    p = rs.wilcoxon_pvalues(small, pairs="adjacent", order=order)

    tested = {(int(i), int(j)) for i, j in zip(*np.nonzero(np.isfinite(p)), strict=True)}
    assert tested == {(2, 0), (0, 2), (0, 3), (3, 0), (3, 1), (1, 3)}
    assert p[2, 0] == pytest.approx(rs.wilcoxon_pvalues(small)[2, 0], rel=1e-12)


def test_wilcoxon_on_few_tied_differences_is_scipys_exact_permutation_p():
    # scipy enumerates the 2**n sign patterns for n <= 13 with ties or zeros; so do we.
    x = np.array([[3.0, 5, 5, 7, 2, 9, 4, 6, 8], [1.0, 5, 3, 5, 3, 6, 2, 6, 5]])
    p = rs.wilcoxon_pvalues(x)

    assert p[0, 1] == pytest.approx(stats.wilcoxon(x[0], x[1], alternative="greater").pvalue)
    assert p[1, 0] == pytest.approx(stats.wilcoxon(x[1], x[0], alternative="greater").pvalue)


def test_wilcoxon_ties_everywhere_is_p_one_and_no_common_segment_is_untested():
    x = np.array([[1.0, 2.0, 3.0, NAN], [1.0, 2.0, 3.0, NAN], [NAN, NAN, NAN, 5.0]])
    p = rs.wilcoxon_pvalues(x)

    assert p[0, 1] == p[1, 0] == 1.0
    assert np.isnan(p[0, 2]) and np.isnan(p[2, 1])


def test_ranksum_matches_mannwhitneyu_and_skips_empty_samples():
    rng = np.random.default_rng(3)
    judgments = [
        rng.normal(0.3, 1, 9),
        np.append(rng.normal(0, 1, 12), NAN),
        np.round(rng.normal(0, 1, 6), 1),
        [],
    ]
    p = rs.ranksum_pvalues(judgments)

    for i, j in itertools.permutations(range(3), 2):
        a = np.asarray(judgments[i], dtype=float)
        b = np.asarray(judgments[j], dtype=float)
        expected = stats.mannwhitneyu(
            a[~np.isnan(a)], b[~np.isnan(b)], alternative="greater"
        ).pvalue
        assert p[i, j] == pytest.approx(expected, rel=1e-12)
    assert np.isnan(p[3]).all() and np.isnan(p[:, 3]).all()


def test_zscore_by_annotator_uses_each_annotators_mean_and_sample_sd():
    scores = np.array([70, 80, 90, 10, 30, NAN, 50, 55, 100, 100])
    ids = np.array(["a", "a", "a", "b", "b", "b", "c", "d", "e", "e"])
    z = rs.zscore_by_annotator(scores, ids)

    for who in ("a", "b"):
        rows = (ids == who) & ~np.isnan(scores)
        values = scores[rows]
        assert z[rows] == pytest.approx((values - values.mean()) / values.std(ddof=1))
    # NaN stays NaN; one judgment (c, d) or a zero sd (e) cannot be standardised.
    assert np.isnan(z[[5, 6, 7, 8, 9]]).all()


# --- the resampling tests ----------------------------------------------------------------------


def test_permutation_enumerates_every_split_exactly_like_scipy(small):
    x = small[:, :9]  # 2**9 = 512 splits <= n_resamples: exact, as scipy
    p = rs.permutation_pvalues(x, n_resamples=1000, rng=None)

    for i, j in itertools.permutations(range(4), 2):
        a, b = common(x, i, j)
        expected = stats.permutation_test(
            (a, b),
            mean_difference,
            permutation_type="samples",
            alternative="greater",
            n_resamples=1000,
            vectorized=True,
        ).pvalue
        assert p[i, j] == pytest.approx(expected, abs=1e-12), (i, j)


def test_permutation_monte_carlo_agrees_with_scipy_within_its_error():
    rng = np.random.default_rng(11)
    x = rng.normal(0, 1, (3, 60)) + np.array([[0.25], [0.1], [0.0]])
    x[2, :5] = NAN
    p = rs.permutation_pvalues(x, n_resamples=4000, rng=np.random.default_rng(1))

    for i, j in [(0, 1), (1, 0), (0, 2), (2, 1)]:
        a, b = common(x, i, j)
        expected = stats.permutation_test(
            (a, b),
            mean_difference,
            permutation_type="samples",
            alternative="greater",
            n_resamples=4000,
            vectorized=True,
            rng=np.random.default_rng(2),
        ).pvalue
        # Both are Monte-Carlo estimates of one p: 5 standard errors of their difference.
        error = math.sqrt(2 * max(expected, 0.01) * (1 - expected) / 4000)
        assert abs(p[i, j] - expected) <= 5 * error, (i, j, p[i, j], expected)


def test_permutation_counts_the_observed_split_and_is_bounded_below():
    x = np.array([[5.0] * 30, [0.0] * 30])  # every split but the identity is below it
    p = rs.permutation_pvalues(x, n_resamples=99, rng=np.random.default_rng(0))

    # (1 + #splits at least as large) / (1 + 99): only the (rare) identity split ties.
    assert p[0, 1] == pytest.approx(1 / 100)
    assert p[1, 0] == 1.0


def test_resampling_results_do_not_depend_on_the_pair_chunks(small):
    x = np.nan_to_num(small, nan=60.0)
    x = np.hstack([x, x, x])  # 42 segments: Monte Carlo, not enumeration
    for test in (rs.permutation_pvalues, rs.bootstrap_pvalues):
        whole = test(x, n_resamples=300, rng=np.random.default_rng(5))
        chunked = test(x, n_resamples=300, rng=np.random.default_rng(5), chunk_cells=13_000)
        np.testing.assert_allclose(chunked, whole, rtol=0, atol=1e-15)


def bootstrap_by_loop(x, n_resamples, seed, variant):
    """A literal reading of the paired bootstrap, one resample and one pair at a time."""
    n, m = x.shape
    drawn = np.random.default_rng(seed).integers(0, m, size=(n_resamples, m))
    p = np.full((n, n), NAN)
    for i, j in itertools.permutations(range(n), 2):
        both = ~np.isnan(x[i]) & ~np.isnan(x[j])
        observed = np.mean(x[i, both] - x[j, both])
        hits = valid = 0
        for segments in drawn:
            keep = segments[both[segments]]
            if keep.size == 0:
                continue
            valid += 1
            resampled = np.mean(x[i, keep] - x[j, keep])
            hits += resampled >= 2 * observed - 1e-9 if variant == "centred" else resampled <= 1e-9
        p[i, j] = (1 + hits) / (1 + valid)
    return p


@pytest.mark.parametrize("variant", ["centred", "koehn"])
def test_bootstrap_matches_a_literal_loop_over_resamples(small, variant):
    p = rs.bootstrap_pvalues(small, n_resamples=200, rng=np.random.default_rng(9), variant=variant)

    np.testing.assert_allclose(p, bootstrap_by_loop(small, 200, 9, variant), atol=1e-12)


def test_identical_systems_are_never_significant_in_any_test():
    x = np.tile(np.array([50.0, 60, 70, 80, 90, 75, 65, 55, 85, 95, 45, 35]), (2, 2))
    rng = np.random.default_rng(0)
    for p in (
        rs.wilcoxon_pvalues(x),
        rs.ranksum_pvalues(list(x)),
        rs.permutation_pvalues(x, n_resamples=200, rng=rng),
        rs.bootstrap_pvalues(x, n_resamples=200, rng=rng),
    ):
        assert p[0, 1] >= 0.5 and p[1, 0] >= 0.5


def test_resampling_tests_refuse_a_missing_generator_and_bad_counts(small):
    x = np.hstack([small] * 3)
    with pytest.raises(ValueError, match=r"rng=numpy\.random\.Generator"):
        rs.permutation_pvalues(x, rng=None)
    with pytest.raises(ValueError, match="n_resamples"):
        rs.bootstrap_pvalues(x, n_resamples=0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="infinity"):
        rs.wilcoxon_pvalues(np.array([[1.0, math.inf], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="pairs"):
        rs.wilcoxon_pvalues(x, pairs="some")


# --- Holm ----------------------------------------------------------------------------------------


def test_holm_on_a_known_example():
    # Four hypotheses 0.01, 0.04, 0.03, 0.005 -> 0.03, 0.06, 0.06, 0.02 (Holm 1979 step-down).
    p = np.array(
        [
            [NAN, 0.01, 0.04, NAN],
            [NAN, NAN, NAN, 0.03],
            [NAN, NAN, NAN, NAN],
            [0.005, NAN, NAN, 0.2],  # the diagonal is never a hypothesis
        ]
    )
    adjusted = rs.holm(p)

    assert adjusted[0, 1] == pytest.approx(0.03)
    assert adjusted[0, 2] == pytest.approx(0.06)
    assert adjusted[1, 3] == pytest.approx(0.06)
    assert adjusted[3, 0] == pytest.approx(0.02)
    assert np.isnan(adjusted[3, 3]) and np.isnan(adjusted[2, 0])


def test_holm_caps_at_one_and_never_lowers_a_p_value():
    p = np.array([[NAN, 0.6, 0.001], [0.5, NAN, 0.9], [0.999, 0.2, NAN]])
    adjusted = rs.holm(p)

    finite = np.isfinite(p)
    assert (adjusted[finite] >= p[finite]).all() and (adjusted[finite] <= 1).all()
    assert adjusted[0, 2] == pytest.approx(0.006)


# --- wins, rank ranges and WMT's clusters ------------------------------------------------------


def table_from_wins(wins):
    """P (in rank order) where the k-th system significantly beats the last wins[k] systems."""
    n = len(wins)
    p = np.full((n, n), 0.5)
    np.fill_diagonal(p, NAN)
    for k, w in enumerate(wins):
        for j in range(n - w, n):
            p[k, j] = 0.001
    return p


def cluster_bounds(clusters):
    """CLUSTER_START, CLUSTER_END and END_OF_CLUSTER per system, as WMT's clusters.csv."""
    clusters = list(clusters)
    rows = []
    for k, c in enumerate(clusters):
        members = [m for m, other in enumerate(clusters) if other == c]
        rows.append((members[0] + 1, members[-1] + 1, k == members[-1]))
    return rows


# WMT22 crowd-DA release, wmt-conference/wmt22-news-systems humaneval/DA/newstest2022-toen/
# clusters.csv: WINS column per language pair in rank order, and each cluster's size.
WMT22_TOEN_CLUSTERS = {
    "de-en": ([9, 4, 4, 3, 1, 2, 0, 1, 0, 0], [1, 9]),
    "ru-en": ([7, 7, 2, 2, 1, 1, 1, 1, 1, 0], [9, 1]),
    "uk-en": ([7, 7, 3, 3, 3, 3, 1, 1, 0], [2, 4, 2, 1]),
    "lv-en": ([3, 1, 1, 1, 0], [4, 1]),
    "cs-en": ([11, 8, 5, 4, 4, 3, 4, 3, 3, 2, 0, 0], [1, 8, 1, 2]),
    "zh-en": ([12, 7, 6, 4, 4, 4, 2, 4, 2, 1, 1, 0, 0], [1, 12]),
    "ja-en": ([8, 8, 5, 5, 7, 5, 2, 2, 2, 1, 2, 1, 1, 0], [13, 1]),
}


@pytest.mark.parametrize("pair", sorted(WMT22_TOEN_CLUSTERS))
def test_wmt_clusters_reproduce_wmt22_published_clusters_from_win_counts(pair):
    wins, sizes = WMT22_TOEN_CLUSTERS[pair]
    p = table_from_wins(wins)
    order = np.arange(len(wins))

    clusters = rs.wmt_clusters(p, order)

    assert rs.wins_and_losses(p, order)[0].tolist() == wins
    assert np.bincount(clusters)[1:].tolist() == sizes


def test_rank_ranges_run_from_one_plus_losses_to_n_minus_wins():
    p = table_from_wins([3, 1, 1, 1, 0])  # lv-en's shape: the top beats the last three

    ranges = rs.rank_ranges(p, np.arange(5))

    assert ranges.tolist() == [[1, 2], [1, 4], [2, 4], [2, 4], [5, 5]]


def test_a_significant_result_against_the_mean_order_is_not_a_win():
    p = np.array([[NAN, 0.5], [0.01, NAN]])  # system 1 "beats" system 0 but ranks below it

    wins, losses = rs.wins_and_losses(p, np.array([0, 1]))

    assert wins.tolist() == [0, 0] and losses.tolist() == [0, 0]
    assert rs.wmt_clusters(p, np.array([0, 1])).tolist() == [1, 1]


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        (np.array([[NAN]]), [1]),  # one system
        (np.array([[NAN, 0.01], [0.99, NAN]]), [1, 2]),  # two systems, significant
        (np.array([[NAN, 0.2], [0.8, NAN]]), [1, 1]),  # two systems, not
        (np.full((3, 3), 0.5), [1, 1, 1]),  # all equal
        (np.array([[NAN, NAN, 0.01], [NAN, NAN, NAN], [0.99, NAN, NAN]]), [1, 1, 1]),  # untested
    ],
)
def test_wmt_clusters_on_hand_made_tables(p, expected):
    order = np.arange(p.shape[0])

    assert rs.wmt_clusters(p, order).tolist() == expected


def test_wmt_clusters_are_indexed_by_system_not_by_rank():
    rank_of_system = [2, 0, 1]  # systems 1, 2, 0 in rank order; the top one beats both others
    p = table_from_wins([2, 0, 0])[np.ix_(rank_of_system, rank_of_system)]
    order = np.array([1, 2, 0])

    assert rs.wmt_clusters(p, order).tolist() == [2, 1, 2]
    assert rs.rank_ranges(p, order).tolist() == [[2, 3], [1, 1], [2, 3]]


# --- rank_systems --------------------------------------------------------------------------------


def test_rank_systems_orders_tests_and_clusters_with_missing_cells():
    rng = np.random.default_rng(4)
    x = rng.normal(0, 5, (3, 80)) + np.array([[60.0], [75.0], [0.0]])
    x[2] = x[0] + np.tile([1.0, -1.0, 2.0, -1.5], 20)  # "c" a hair above "a", not significantly
    x[0, :10] = NAN  # system "a" missing from some segments

    ranking = rs.rank_systems(x, ["a", "b", "c"], test="wilcoxon")

    assert ranking.systems == ["b", "c", "a"]
    assert ranking.n_segments.tolist() == [80, 80, 70]
    assert ranking.means[0] == pytest.approx(np.mean(x[1]))
    assert ranking.wins.tolist() == [2, 0, 0]
    assert ranking.clusters.tolist() == [1, 2, 2]
    assert ranking.rank_ranges.tolist() == [[1, 1], [2, 3], [2, 3]]
    assert ranking.input_order.tolist() == [1, 2, 0]
    assert ranking.p_values[0, 1] == pytest.approx(rs.wilcoxon_pvalues(x)[1, 2])


def test_rank_systems_with_holm_and_each_test_gives_json_safe_dicts():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 1, (4, 40)) + np.array([[1.0], [0.5], [0.4], [0.0]])
    for test in rs.TESTS:
        ranking = rs.rank_systems(
            x, list("wxyz"), test=test, holm_correction=True, n_resamples=200, rng=rng
        )
        as_json = json.loads(json.dumps(ranking.as_dict(), allow_nan=False))
        assert as_json["systems"][0] == "w"
        assert as_json["p_values"][0][0] is None
        assert len(as_json["clusters"]) == 4


@pytest.mark.parametrize(
    ("scores", "systems", "message"),
    [
        ([[1.0, 2.0], [3.0, 4.0]], ["a"], "1 system names for 2 rows"),
        ([[1.0, 2.0], [3.0, 4.0]], ["a", "a"], "unique"),
        ([[1.0, 2.0], [NAN, NAN]], ["a", "b"], "'b' has no score"),
        ([[1.0, 1e300]], ["a"], "beyond"),
        ([1.0, 2.0], ["a"], "matrix"),
        ([["1", "x"]], ["a"], "numbers"),
        ([[1.0, 2.0], [3.0]], ["a", "b"], "numbers"),
        (np.zeros((0, 3)), [], "no system"),
    ],
)
def test_rank_systems_refuses_bad_input(scores, systems, message):
    with pytest.raises(ValueError, match=message):
        rs.rank_systems(scores, systems)


# --- WMT22 lv-en, as released --------------------------------------------------------------------

LVEN_SYSTEMS = ["TartuNLP.1", "TAL-SJTU.3", "HuaweiTSC.0", "Liv4ever.4", "NiuTrans.2"]


@pytest.fixture
def lven(shared_data):
    folder = shared_data / "ranking" / "wmt22-da-lven"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return folder


def published_clusters(folder):
    with open(folder / "clusters-lv-en.csv", encoding="utf-8") as handle:
        rows = [line.split() for line in handle if line.strip()]
    # The sample repeats the header and the first rows (as the release's file does per pair).
    table = {row[-1]: row for row in rows if row[0] != "SRC"}
    return [table[s] for s in LVEN_SYSTEMS]


def published_pvalues(folder):
    with open(folder / "adwilcox-lven.csv", encoding="utf-8") as handle:
        lines = [line.split() for line in handle if line.strip()]
    header = lines[0]
    rows = {line[0]: [float(v) for v in line[1:]] for line in lines[1:]}
    index = [header.index(s) for s in LVEN_SYSTEMS]
    p = np.array([[rows[s][k] for k in index] for s in LVEN_SYSTEMS])
    np.fill_diagonal(p, NAN)
    return p


def assert_matches_published(clusters, wins, published):
    assert wins.tolist() == [int(row[2]) for row in published]
    expected = [(int(row[4]), int(row[5]), row[6] == "True") for row in published]
    assert cluster_bounds(clusters) == expected


def test_lven_clusters_from_the_published_pvalues(lven):
    p = published_pvalues(lven)
    order = np.arange(5)  # the release's rows are in z order

    clusters = rs.wmt_clusters(p, order)

    assert_matches_published(clusters, rs.wins_and_losses(p, order)[0], published_clusters(lven))


def test_lven_clusters_from_the_raw_judgments_with_our_rank_sum(lven):
    by_cell = defaultdict(list)
    with open(lven / "ad-lven-good-stnd.csv", encoding="utf-8", newline="") as handle:
        header = handle.readline().split()  # the header is space-separated, the rows tabbed
        for row in csv.DictReader(handle, fieldnames=header, delimiter="\t"):
            if row["type"] in ("SYSTEM", "REPEAT"):  # quality-control items are not scores
                by_cell[row["sys_id"], row["sid"]].append(float(row["score"]))
    segments = sorted({sid for _, sid in by_cell}, key=int)
    column = {sid: k for k, sid in enumerate(segments)}
    x = np.full((5, len(segments)), NAN)
    for (system, sid), z in by_cell.items():
        x[LVEN_SYSTEMS.index(system), column[sid]] = np.mean(z)  # WMT's per-segment mean z

    ranking = rs.rank_systems(x, LVEN_SYSTEMS, test="ranksum")

    assert ranking.systems == LVEN_SYSTEMS
    assert_matches_published(ranking.clusters, ranking.wins, published_clusters(lven))
    published = published_pvalues(lven)
    significant = published < 0.05
    # Means equal up to float noise tie or not depending on the summation order (the release's
    # R code, printed to 15 digits): the rank-sum's tie correction moves p by < 1 %.
    np.testing.assert_allclose(ranking.p_values[significant], published[significant], rtol=0.01)


def test_lven_rank_sum_on_the_released_segment_means_is_the_published_test(lven):
    by_system = defaultdict(list)
    with open(lven / "ad-seg-scores-lv-en.csv", encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            system, _sid, _raw, z, _n = line.split()
            by_system[system].append(float(z))

    p = rs.ranksum_pvalues([by_system[s] for s in LVEN_SYSTEMS])

    published = published_pvalues(lven)
    significant = published < 0.05  # the release prints 0.12 where it is not significant
    np.testing.assert_allclose(p[significant], published[significant], rtol=1e-9)
    assert (p[~significant & np.isfinite(p)] >= 0.05).all()
