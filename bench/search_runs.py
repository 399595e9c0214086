"""Search runs on the platform vs the same bandit loop in memory (issues 7 and 19).

For each topic-set size and for two budgets, B and GROWTH × B (3 by default), two fresh
processes run the same synthetic search (seed 000 §3.3 world, the platform's default method,
the same seed, batch and budget):

* ``baseline``: the bare loop ``policy.select`` → ``world.difficulty_of`` → ``policy.update``
  in memory: the cost of the search itself;
* ``platform``: ``start_search_run`` + every round through ``search.runs.services`` on a throwaway
  SQLite database: restore the policy, select, draw text ids, score them through the engine
  call path (ledger), write every pull, persist the state, per round.

Both draw the same texts, so their recommendations must be identical (checked). The batch is
the platform's default for budget B (the run config names none; issue 19) and stays the same
at GROWTH × B, so the larger run has GROWTH times the rounds and the pulls.

Reported: wall seconds, microseconds per pull, bookkeeping per pull (platform minus bare loop,
divided by the pulls), peak RSS, stored state size, the platform/baseline ratio, and the growth
(time at GROWTH × B over time at B) of both. Issue 19's goals: platform growth ≤ 1.1 × GROWTH
(3.3 for 3×) and bookkeeping ≤ 0.5 ms per pull.

    .venv/bin/python bench/search_runs.py                   # 100k and 1M topics
    .venv/bin/python bench/search_runs.py --sizes 100000 --json-out bench/results/runs.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET_PER_TOPIC = {100_000: 1.0, 1_000_000: 0.5}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _config(size: int, budget: int, batch: int | None, seed: int) -> dict:
    config = {
        "name": f"bench {size}",
        "sampler": "synthetic",
        "difficulty_engine": {
            "name": f"synthetic-bench-{size}",
            "kind": "synthetic",
            "capabilities": ["difficulty"],
            "params": {"n_topics": size, "seed": 0},
        },
        "budget_pulls": budget,
        "k": 10,
        "seed": seed,
    }
    if batch:
        config["batch_size"] = batch  # else the platform's default for the run
    return config


def part_baseline(size: int, budget: int, batch: int, seed: int) -> dict:
    import numpy as np

    from engines.offline.synthetic_world import SyntheticWorld
    from search.bandit import make_policy

    world = SyntheticWorld(n_topics=size, seed=0)
    world.true_means  # noqa: B018  (drawn before the clock starts, as the platform caches it)
    start = time.perf_counter()
    policy = make_policy("default", size, 10, np.random.default_rng(seed), budget=budget)
    counts = np.zeros(size, dtype=np.int64)
    while not policy.done:
        arms = policy.select(batch)
        if arms.shape[0] == 0:
            break
        # The platform's draw numbering: the arm's pull number, mixed with the run seed.
        draws = np.empty(arms.shape[0], dtype=np.int64)
        for i, arm in enumerate(arms):
            draws[i] = (seed * 1_000_003 + counts[arm]) % 2**32
            counts[arm] += 1
        policy.update(arms, world.difficulty_of(arms, draws).astype(np.float64))
    wall = time.perf_counter() - start
    top = policy.top_k()
    return {"wall_s": wall, "top_k": [int(t) for t in top], "peak_rss_mb": _peak_mb()}


def part_platform(size: int, budget: int, batch: int | None, seed: int, var_dir: str) -> dict:
    import secrets

    os.environ.update(HARDSET_VAR_DIR=var_dir, DEBUG="false", SECRET_KEY=secrets.token_urlsafe(50))
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from engines.registry import resolve
    from search.runs.services import run_in_foreground, start_search_run
    from search.runs.state import state_size

    run = start_search_run(_config(size, budget, batch, seed), enqueue=False)
    resolve(run.difficulty_engine, "world").true_means  # noqa: B018  (as in the baseline)
    start = time.perf_counter()
    run = run_in_foreground(run.pk)
    wall = time.perf_counter() - start
    return {
        "wall_s": wall,
        "top_k": run.result["top_k"],
        "status": run.status,
        "pulls": run.pulls_done,
        "rounds": run.round_index,
        "batch": run.batch_size,
        "state_bytes": state_size(run),
        "true_top_k_mean": run.result["true_top_k_mean"],
        "oracle_top_k_mean": run.result["oracle_top_k_mean"],
        "peak_rss_mb": _peak_mb(),
    }


def _child(part: str, size: int, budget: int, batch: int | None, seed: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="hardset-bench-") as var_dir:
        command = [sys.executable, __file__, "--part", part, "--sizes", str(size),
                   "--budget", str(budget), "--batch", str(batch or 0), "--seed", str(seed),
                   "--var-dir", var_dir]  # fmt: skip
        out = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _pair(size: int, budget: int, batch: int | None, seed: int) -> dict:
    """Platform first (with ``batch`` None it picks the default), then the bare loop on the
    batch the platform used."""
    platform = _child("platform", size, budget, batch, seed)
    baseline = _child("baseline", size, budget, platform["batch"], seed)
    bookkeeping = (platform["wall_s"] - baseline["wall_s"]) / budget
    return {
        "budget_pulls": budget,
        "batch_size": platform["batch"],
        "baseline": baseline,
        "platform": platform,
        "us_per_pull": {
            "baseline": round(baseline["wall_s"] / budget * 1e6, 1),
            "platform": round(platform["wall_s"] / budget * 1e6, 1),
        },
        "bookkeeping_ms_per_pull": round(bookkeeping * 1e3, 3),
        "platform_over_baseline": round(platform["wall_s"] / baseline["wall_s"], 2),
        "results_agree": baseline["top_k"] == platform["top_k"],
    }


def measure(size: int, seed: int, growth: int) -> dict:
    budget = int(BUDGET_PER_TOPIC.get(size, 1.0) * size)
    first = _pair(size, budget, None, seed)
    more = _pair(size, growth * budget, first["batch_size"], seed)
    return {
        "topics": size,
        "growth": growth,
        "runs": [first, more],
        "time_growth": {
            "baseline": round(more["baseline"]["wall_s"] / first["baseline"]["wall_s"], 2),
            "platform": round(more["platform"]["wall_s"] / first["platform"]["wall_s"], 2),
        },
    }


def render(results: list[dict]) -> str:
    lines = [
        "| topics | pulls | batch | rounds | bare loop s | platform s | ratio "
        "| µs per pull (platform) | bookkeeping ms per pull | time growth (bare / platform) "
        "| peak RSS MB (bare / platform) | stored state KB | same top-k |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for r in results:
        for i, run in enumerate(r["runs"]):
            b, p = run["baseline"], run["platform"]
            growth = (
                f"{r['time_growth']['baseline']} / {r['time_growth']['platform']} "
                f"(× {r['growth']} pulls)"
                if i
                else ""
            )
            lines.append(
                f"| {r['topics']:,} | {run['budget_pulls']:,} | {run['batch_size']:,} "
                f"| {p['rounds']:,} | {b['wall_s']:.1f} | {p['wall_s']:.1f} "
                f"| {run['platform_over_baseline']} | {run['us_per_pull']['platform']} "
                f"| {run['bookkeeping_ms_per_pull']} | {growth} "
                f"| {b['peak_rss_mb']:.0f} / {p['peak_rss_mb']:.0f} "
                f"| {p['state_bytes'] / 1024:,.0f} | {'yes' if run['results_agree'] else 'NO'} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--growth", type=int, default=3, help="the larger budget over B")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--part", choices=["baseline", "platform"], help=argparse.SUPPRESS)
    parser.add_argument("--budget", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--var-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part == "baseline":
        print(json.dumps(part_baseline(args.sizes[0], args.budget, args.batch, args.seed)))
        return
    if args.part == "platform":
        batch = args.batch or None
        result = part_platform(args.sizes[0], args.budget, batch, args.seed, args.var_dir)
        print(json.dumps(result))
        return
    results = []
    for size in args.sizes:
        results.append(measure(size, args.seed, args.growth))
        print(render(results[-1:]), flush=True)
        if args.json_out:  # after each size: the 1M case may not finish
            args.json_out.parent.mkdir(parents=True, exist_ok=True)
            args.json_out.write_text(json.dumps(results, indent=2))
    print(render(results))


if __name__ == "__main__":
    main()
