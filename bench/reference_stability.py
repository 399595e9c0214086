"""How stable is the full data's top cluster itself? (issue 42's top-cluster goal)

The replay's top-cluster measure asks a policy to find the full data's top cluster and keep it
to the end. Where that cluster rests on pairs near alpha, another draw of the same number of
segments would often give another cluster, and no allocation can settle it early. This bench
resamples each dataset's segments with replacement (the bootstrap: what another test set of the
same size might have said; ``ranking.replay.top_cluster_stability``, which replay pages show)
and, for contrast, takes random halves of the segments without replacement (what uniform at
half the budget sees, every cell of half the segments), and reports how often the ranking's
test (``ranking.replay.reference_ranking``: paired permutation test, WMT clusters, alpha 0.05)
gives the full data's top cluster.

    .venv/bin/python bench/reference_stability.py                  # ~10 s, 500 draws a dataset
    .venv/bin/python bench/reference_stability.py --datasets wmt24-en-cs --draws 2000

The datasets are ``bench/adaptive_replay.py``'s. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive_replay import LOADERS

from ranking import replay as rp


def top_cluster(data: rp.ReplayData, segments: np.ndarray, resamples: int) -> frozenset[int]:
    part = rp.ReplayData(data.judgments[:, segments], data.systems)
    return rp.reference_ranking(part, n_resamples=resamples).top


def stability(name: str, draws: int, resamples: int) -> dict[str, object]:
    data = LOADERS[name]()
    full = rp.reference_ranking(data, n_resamples=1000)
    n = data.judgments.shape[1]
    rng = np.random.default_rng(0)
    bootstrap = rp.top_cluster_stability(data, full, draws=draws, n_resamples=resamples)
    same_half = sum(
        top_cluster(data, rng.permutation(n)[: n // 2], resamples) == full.top for _ in range(draws)
    )
    return {
        "dataset": name,
        "systems": len(data.systems),
        "segments": n,
        "top": len(full.top),
        "clusters": full.n_clusters,
        "bootstrap": bootstrap,
        "half": same_half / draws,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets", nargs="+", choices=sorted(LOADERS), default=sorted(LOADERS)
    )  # fmt: skip
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=200, help="Permutations a test.")
    args = parser.parse_args()
    print(
        "| data | systems × segments | full data: top cluster (clusters) "
        "| same top cluster: bootstrap | random half of the segments |"
    )
    print("| --- | --- | --- | ---: | ---: |")
    for name in args.datasets:
        row = stability(name, args.draws, args.resamples)
        print(
            f"| {row['dataset']} | {row['systems']} × {row['segments']} "
            f"| {row['top']} systems ({row['clusters']}) | {row['bootstrap']:.2f} "
            f"| {row['half']:.2f} |"
        )


if __name__ == "__main__":
    main()
