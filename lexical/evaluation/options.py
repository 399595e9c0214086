"""Shuffled option order (seed 004 App. B.4): a fresh order for every (run, example), drawn from
the evaluation's stored seed, so a rerun shows every model the same orders."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["option_order"]


def option_order(seed: int, run: int, example_id: int, variation_ids: Sequence[int]) -> list[int]:
    """``variation_ids`` in a random order determined by (seed, run, example) alone.

    The same for every engine and setting of an evaluation, so differences between them are not
    differences in the orders they saw.
    """
    rng = np.random.default_rng([int(seed) % 2**63, int(run), int(example_id)])
    ids = [int(v) for v in variation_ids]
    return [ids[i] for i in rng.permutation(len(ids))]
