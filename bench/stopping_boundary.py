"""The stopping rule with and without its sequential boundary, on the same replays (issue 42).

An adaptive campaign checks its goal after every batch, so a pair's test is looked at dozens of
times as its judgments come in; a fixed ``z`` bar then lets an early run of lucky segments end
the campaign on a boundary the full data does not confirm. ``StoppingRule(sequential=True)``
(the default) asks a pair the decision rests on to cross the continuous-monitoring O'Brien-Fleming
boundary ``z_{alpha/2} sqrt(r)`` as well, ``r`` its information still to come. This bench replays
each policy and seed once per rule: the allocation and the revealed scores are the same (the
stopping rule draws from its own stream), only the stop differs. Per dataset and policy: how
many runs stopped, how many of those stops had the full data's top cluster, and the mean stopping
budget, with the sequential rule's budget over the fixed rule's on the seeds where both stopped.

    .venv/bin/python bench/stopping_boundary.py --seeds 10          # ~10 min on 2 cores
    .venv/bin/python bench/stopping_boundary.py --datasets wmt23-en-de-sxs --seeds 10

The datasets are ``bench/adaptive_replay.py``'s. Writes bench/results/stopping_boundary.json and
prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive_replay import LOADERS, RESULTS

from ranking import replay as rp
from ranking.allocation import StoppingRule, make_policy

RULES = {"fixed": False, "sequential": True}
_WORK: dict[str, object] = {}


def _init(data: rp.ReplayData, reference: rp.Reference, budgets: np.ndarray) -> None:
    _WORK.update(data=data, reference=reference, budgets=budgets)


def _run(job: tuple[str, int, str]) -> tuple[str, int, str, int | None, bool | None]:
    policy, seed, rule = job
    trace = rp.replay(
        _WORK["data"], make_policy(policy), seed, _WORK["reference"],  # type: ignore[arg-type]
        budgets=_WORK["budgets"],  # type: ignore[arg-type]
        stopping=StoppingRule(goal="top", sequential=RULES[rule]),
    )  # fmt: skip
    return policy, seed, rule, trace.stop_budget, trace.stop_top_correct


def run_dataset(name: str, args: argparse.Namespace) -> dict:
    data = LOADERS[name]()
    reference = rp.reference_ranking(data, n_resamples=1000)
    budgets = rp.checkpoint_budgets(data.total, args.checkpoints)
    jobs = [(p, s, r) for p in args.policies for s in range(args.seeds) for r in RULES]
    started = time.perf_counter()
    with ProcessPoolExecutor(
        args.workers, initializer=_init, initargs=(data, reference, budgets)
    ) as pool:
        results = list(pool.map(_run, jobs))
    stops = {(p, s, r): (b, ok) for p, s, r, b, ok in results}
    rows = {}
    for policy in args.policies:
        row: dict[str, object] = {}
        for rule in RULES:
            fired = [stops[(policy, s, rule)] for s in range(args.seeds)]
            fired = [(b, ok) for b, ok in fired if b is not None]
            row[rule] = {
                "stopped": len(fired),
                "right": sum(bool(ok) for _, ok in fired),
                "mean_budget": float(np.mean([b for b, _ in fired])) if fired else None,
            }
        both = [
            (stops[(policy, s, "sequential")][0], stops[(policy, s, "fixed")][0])
            for s in range(args.seeds)
            if stops[(policy, s, "sequential")][0] is not None
            and stops[(policy, s, "fixed")][0] is not None
        ]
        row["later_by"] = (
            float(np.mean([a / b for a, b in both])) if both else None  # type: ignore[operator]
        )
        rows[policy] = row
    return {
        "dataset": name,
        "total_judgments": data.total,
        "full_top_cluster": [data.systems[i] for i in sorted(reference.top)],
        "seeds": args.seeds,
        "seconds": round(time.perf_counter() - started, 1),
        "policies": rows,
    }


def table(report: dict) -> str:
    lines = [
        "| data | policy | fixed: stopped (right) at | sequential: stopped (right) at "
        "| sequential / fixed |",
        "| --- | --- | --- | --- | --- |",
    ]
    for result in report["datasets"]:
        for policy, row in result["policies"].items():
            cells = []
            for rule in RULES:
                r = row[rule]
                at = "never" if r["mean_budget"] is None else f"{r['mean_budget']:,.0f}"
                cells.append(f"{r['stopped']}/{result['seeds']} ({r['right']}) at {at}")
            ratio = "–" if row["later_by"] is None else f"{row['later_by']:.2f}×"
            lines.append(f"| {result['dataset']} | {policy} | {cells[0]} | {cells[1]} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets", nargs="+", choices=sorted(LOADERS), default=sorted(LOADERS)
    )  # fmt: skip
    parser.add_argument("--policies", nargs="+", default=["settle", "uniform"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--checkpoints", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    report = {"args": vars(args), "datasets": [run_dataset(d, args) for d in args.datasets]}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "stopping_boundary.json").write_text(json.dumps(report, indent=2))
    print(table(report))


if __name__ == "__main__":
    main()
