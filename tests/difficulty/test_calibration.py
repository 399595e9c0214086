import numpy as np
import pytest

from difficulty.calibration import Calibration, agreement, fit_calibration


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
