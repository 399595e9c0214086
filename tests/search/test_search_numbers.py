import math

import pytest

from search.templatetags.search_numbers import difficulty


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (37.25, "37.2"),
        (-12.0, "-12.0"),
        (4.254, "4.3"),
        (-0.0061234, "-0.00612"),
        (0, "0.0"),
        (None, "–"),
        ("", "–"),
        ("x", "–"),
        (math.nan, "–"),
    ],
)
def test_difficulty_keeps_small_heuristic_values_readable(value, shown):
    assert difficulty(value) == shown
