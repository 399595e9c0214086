"""Opaque numbers (core/opaque_ids.py): a keyed permutation that reads back, says nothing of
the id's order, and refuses what is not one of its numbers."""

from __future__ import annotations

from itertools import pairwise

import pytest

from core.opaque_ids import ID_BITS, OPAQUE_MIN, from_opaque, to_opaque

KEY = b"k" * 32


def test_every_id_reads_back_and_every_number_has_sixteen_digits():
    ids = [0, 1, 2, 3, 999, 2**26, 2**26 + 1, 2**40, 2**ID_BITS - 1]
    numbers = [to_opaque(i, KEY) for i in ids]

    assert [from_opaque(n, KEY) for n in numbers] == ids
    assert len(set(numbers)) == len(ids)
    assert all(OPAQUE_MIN <= n < 2 * OPAQUE_MIN and len(str(n)) == 16 for n in numbers)


def test_consecutive_ids_give_numbers_out_of_order_that_depend_on_the_key():
    numbers = [to_opaque(i, KEY) for i in range(1, 201)]

    # Order says nothing: as many rises as falls, roughly, and no constant step.
    rises = sum(b > a for a, b in pairwise(numbers))
    assert 60 < rises < 140
    assert len({b - a for a, b in pairwise(numbers)}) == 199
    assert [to_opaque(i, b"another key") for i in range(1, 201)] != numbers


def test_what_is_not_an_opaque_number_reads_as_none_and_ids_out_of_range_are_refused():
    assert from_opaque(12, KEY) is None
    assert from_opaque(OPAQUE_MIN - 1, KEY) is None
    assert from_opaque(2 * OPAQUE_MIN, KEY) is None
    with pytest.raises(ValueError, match="between 0 and"):
        to_opaque(-1, KEY)
    with pytest.raises(ValueError, match="between 0 and"):
        to_opaque(2**ID_BITS, KEY)
