import numpy as np
import pytest

from difficulty.calibration import (
    Calibration,
    agreement,
    cross_validated_predictions,
    fit_calibration,
)


def test_isotonic_fit_is_monotone_and_reproduces_ordered_pairs():
    auto = np.array([10.0, 20.0, 30.0, 40.0])
    human = np.array([5.0, 25.0, 20.0, 60.0])

    calibration = fit_calibration(auto, human)
    mapped = calibration.apply(auto)

    # Pool-adjacent-violators merges the out-of-order pair (25, 20) into its mean 22.5.
    np.testing.assert_allclose(mapped, [5.0, 22.5, 22.5, 60.0])
    assert calibration.n_pairs == 4


def test_apply_clips_outside_the_fitted_range():
    calibration = fit_calibration(np.array([10.0, 20.0, 30.0]), np.array([1.0, 2.0, 3.0]))

    np.testing.assert_allclose(calibration.apply(np.array([0.0, 100.0])), [1.0, 3.0])


def test_too_few_pairs_give_the_identity():
    calibration = fit_calibration(np.array([1.0, np.nan]), np.array([2.0, 3.0]))

    assert calibration.n_pairs == 1
    np.testing.assert_allclose(calibration.apply(np.array([7.0])), [7.0])


def test_round_trip_through_a_dict():
    calibration = fit_calibration(np.array([1.0, 2.0, 3.0]), np.array([3.0, 4.0, 9.0]))

    restored = Calibration.from_dict(calibration.to_dict())

    assert restored == calibration


def test_agreement_kendall_and_mae():
    result = agreement(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]))

    assert result.kendall_tau == pytest.approx(1 / 3)
    assert result.mean_abs_error == pytest.approx(2 / 3)
    assert result.n_pairs == 3


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="same length"):
        fit_calibration(np.array([1.0]), np.array([1.0, 2.0]))


def test_held_out_predictions_come_from_maps_fitted_without_the_pair():
    # Humans agree with the estimator except on one outlier pair: fitted on all pairs, the
    # map passes through the outlier; held out, the outlier is predicted from the others.
    auto = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    human = np.array([10.0, 20.0, 90.0, 40.0, 50.0])

    held = cross_validated_predictions(auto, human, np.random.default_rng(0))

    assert (held.n_folds, held.method) == (5, "leave-one-out")
    # Leave-one-out: each prediction is the isotonic fit of the four other pairs at that x.
    expected = [
        fit_calibration(np.delete(auto, i), np.delete(human, i)).apply(auto[i : i + 1])[0]
        for i in range(5)
    ]
    np.testing.assert_allclose(held.predictions, expected)
    in_sample = agreement(fit_calibration(auto, human).apply(auto), human)
    held_out = agreement(held.predictions, human)
    assert held_out.mean_abs_error == pytest.approx(np.mean(np.abs(np.array(expected) - human)))
    assert held_out.mean_abs_error > in_sample.mean_abs_error


def test_many_pairs_get_five_folds_and_each_pair_one_prediction():
    rng = np.random.default_rng(1)
    auto = rng.uniform(0, 100, 50)
    human = auto / 2 + rng.normal(0, 5, 50)
    human[3] = np.nan

    held = cross_validated_predictions(auto, human, np.random.default_rng(7))

    assert (held.n_folds, held.method) == (5, "5-fold")
    assert np.isnan(held.predictions[3])
    assert np.isfinite(np.delete(held.predictions, 3)).all()
    again = cross_validated_predictions(auto, human, np.random.default_rng(7))
    np.testing.assert_array_equal(again.predictions, held.predictions)


def test_too_few_pairs_for_folds_keep_the_automatic_values():
    held = cross_validated_predictions(
        np.array([1.0, 2.0]), np.array([5.0, 6.0]), np.random.default_rng(0)
    )

    assert (held.n_folds, held.method) == (0, "not fitted")
    np.testing.assert_array_equal(held.predictions, [1.0, 2.0])
