"""A bound for issue 42's replay: an allocation that knows the full data's top cluster.

Not a policy anyone can run (it reads the answer); it asks how early the top cluster can be
recovered *and stay recovered* on these samples at all. After ``settle``'s cold start it
judges the cross pairs of the full data's top cluster (one member, one system below) whose
paired ``z`` is still under ``--z``, highest z first, and the ``--pin`` systems' columns up to
every rater of every cell (a column ranks as a pair at z = 1), then whole segments; the replay,
its measures and its seeds are ``bench/adaptive_replay.py``'s (``ranking.replay.replay``).

    .venv/bin/python bench/adaptive_replay_oracle.py --dataset wmt24-en-cs --seeds 5 \\
        --pin IKUN-C Llama3-70B
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from adaptive_replay import LOADERS  # noqa: E402

from ranking import replay as rp  # noqa: E402
from ranking.allocation import AllocationState, SettlePolicy, make_policy, pair_statistics  # noqa: E402


class Oracle(SettlePolicy):
    """``settle``'s cell choice, aimed at pairs picked with the full data's top cluster."""

    def __init__(self, top: frozenset[int], pinned: list[int], z: float) -> None:
        super().__init__(name="oracle")
        self.top, self.pinned, self.z = sorted(top), pinned, z

    def _targets(self, state: AllocationState) -> tuple[list[tuple[int, int, float]], bool]:
        open_ = state.open_cells()
        pinned = [(s, s, -1.0) for s in self.pinned if open_[s].any()]  # a column on its own
        z = pair_statistics(state).z()
        rest = [s for s in range(state.shape[0]) if s not in self.top]
        cross = sorted(
            ((i, j, -float(z[i, j])) for i in self.top for j in rest
             if z[i, j] < self.z and (open_[i].any() or open_[j].any())),
            key=lambda p: p[2],
        )  # fmt: skip
        pairs = sorted(pinned + cross, key=lambda p: p[2])
        return pairs, False


_WORK: dict[str, object] = {}


def _init(name: str, pinned: list[str], z: float) -> None:
    data = LOADERS[name]()
    _WORK.update(data=data, reference=rp.reference_ranking(data), z=z,
                 pinned=[data.systems.index(s) for s in pinned])  # fmt: skip


def _run(seed: int) -> tuple[int | None, int | None]:
    data, reference = _WORK["data"], _WORK["reference"]
    assert isinstance(data, rp.ReplayData) and isinstance(reference, rp.Reference)
    budgets = rp.checkpoint_budgets(data.total)
    found = []
    for policy in (Oracle(reference.top, _WORK["pinned"], _WORK["z"]), None):  # type: ignore[arg-type]
        trace = rp.replay(data, policy or make_policy("uniform"), seed, reference, budgets=budgets)
        index = rp._stays(trace.top)
        found.append(None if index is None else int(trace.budgets[index]))
    return found[0], found[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", choices=sorted(LOADERS), default="wmt24-en-cs")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--pin", nargs="*", default=[], help="Systems judged completely first.")
    parser.add_argument("--z", type=float, default=2.5, help="Cross pairs judged up to this z.")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with ProcessPoolExecutor(
        args.workers, initializer=_init, initargs=(args.dataset, args.pin, args.z)
    ) as pool:
        runs = list(pool.map(_run, range(args.seeds)))
    oracle = [o for o, _ in runs]
    uniform = [u for _, u in runs]
    print(f"{args.dataset}, pinned {args.pin or 'none'}, z {args.z}, {args.seeds} seeds")
    print(f"oracle top cluster stays from: {oracle}, mean {np.mean([o for o in oracle if o]):.0f}")
    print(f"uniform (same seeds): {uniform}, mean {np.mean([u for u in uniform if u]):.0f}")


if __name__ == "__main__":
    main()
