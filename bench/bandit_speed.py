"""Bookkeeping cost of the bandit policies: time per pull, memory per topic, MABWiser ratio.

Only ``select`` and ``update`` are timed; drawing difficulties from the synthetic world is not.
Per-pull cost = batch cost / batch size. For each (policy, |T|, batch size) the run is first
driven with large batches to half its budget (1.5 pulls per topic), so that the timed window
sees a realistic state (many topics explored, exploitation under way), then a window of
batches at the measured batch size is timed.

    .venv/bin/pip install -r bench/requirements.txt   # MABWiser, for the comparison
    .venv/bin/python bench/bandit_speed.py --quick
    .venv/bin/python bench/bandit_speed.py

Writes bench/results/bandit_speed.json (and _quick).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engines.offline.synthetic_world import SyntheticWorld  # noqa: E402
from search.bandit import Policy, make_policy  # noqa: E402

RESULTS = ROOT / "bench" / "results"
K = 10
RHO = 1.5
WARM_BATCH = 10_000
POLICIES: list[tuple[str, dict[str, Any]]] = [
    ("brute", {"cap": 1}),
    ("greedy", {"cap": 10}),
    ("epsilon_greedy", {"cap": 10, "epsilon": 0.7}),
    ("sequential_halving", {}),
    ("eb_ucb", {}),
    ("default", {}),
]


def build(name: str, n: int, params: dict[str, Any]) -> Policy:
    return make_policy(name, n, K, np.random.default_rng(0), budget=int(RHO * n), **params)


def step(policy: Policy, world: SyntheticWorld, batch: int) -> tuple[int, float]:
    """One select + update; returns (pulls, seconds of bookkeeping)."""
    t0 = time.perf_counter()
    topics = policy.select(batch)
    t1 = time.perf_counter()
    if topics.shape[0] == 0:
        return 0, t1 - t0
    values = world.difficulty_of(topics, policy.stats.counts[topics])
    t2 = time.perf_counter()
    policy.update(topics, values)
    t3 = time.perf_counter()
    return int(topics.shape[0]), (t1 - t0) + (t3 - t2)


def warm(policy: Policy, world: SyntheticWorld, until: int) -> None:
    while policy.stats.n_scored < until and not policy.done:
        pulls, _ = step(policy, world, WARM_BATCH)
        if pulls == 0:
            break


def time_window(policy: Policy, world: SyntheticWorld, batch: int, max_pulls: int) -> dict:
    pulls = batches = 0
    seconds = 0.0
    limit = max(batch, max_pulls)
    while pulls < limit and batches < 3_000 and not policy.done:
        got, spent = step(policy, world, batch)
        if got == 0:
            break
        pulls += got
        batches += 1
        seconds += spent
    return {
        "pulls": pulls,
        "batches": batches,
        "us_per_pull": 1e6 * seconds / max(pulls, 1),
        "us_per_batch": 1e6 * seconds / max(batches, 1),
    }


def state_bytes(obj: Any, seen: set[int] | None = None) -> int:
    """Bytes of every numpy array reachable from the policy's attributes."""
    seen = seen if seen is not None else set()
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, dict):
        return sum(state_bytes(v, seen) for v in obj.values())
    if isinstance(obj, list | tuple):
        return sum(state_bytes(v, seen) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type | np.random.Generator):
        return sum(state_bytes(v, seen) for v in vars(obj).values())
    return 0


def measure_policy(name: str, params: dict[str, Any], n: int, batches: list[int], window: int):
    world = SyntheticWorld(n, seed=0)
    _ = world.true_means
    t0 = time.perf_counter()
    warmed = build(name, n, params)
    init_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm(warmed, world, int(RHO * n) // 2)
    warm_pulls = warmed.stats.n_scored
    warm_us = 1e6 * (time.perf_counter() - t0) / max(warm_pulls, 1)
    rows = []
    for batch in batches:
        # Every batch size starts from the same half-spent state.
        timing = time_window(copy.deepcopy(warmed), world, batch, window)
        rows.append({"batch": batch, **timing})
    del warmed
    # Memory: a fresh run to half the budget under tracemalloc (numpy allocations are traced).
    tracemalloc.start()
    policy = build(name, n, params)
    warm(policy, world, int(RHO * n) // 2)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    blob = json.dumps(policy.to_dict())
    return {
        "policy": name,
        "params": params,
        "n_topics": n,
        "init_s": init_s,
        "warmup_us_per_pull_b10000_incl_world": warm_us,
        "timings": rows,
        "state_bytes_per_topic": state_bytes(policy) / n,
        "peak_bytes_per_topic": peak / n,
        "serialized_bytes_per_topic": len(blob) / n,
    }


def mabwiser_per_pull(n_arms: int, pulls: int) -> dict[str, Any] | None:
    """MABWiser EpsilonGreedy, one predict + partial_fit per pull (its unit of work)."""
    try:
        from mabwiser.mab import MAB, LearningPolicy
    except ImportError:
        return None
    world = SyntheticWorld(n_arms, seed=0)
    rng = np.random.default_rng(0)
    mab = MAB(list(range(n_arms)), LearningPolicy.EpsilonGreedy(epsilon=0.7), seed=0)
    first = rng.permutation(n_arms)[:1000]
    mab.fit(first.tolist(), world.sample(first, rng).tolist())
    start = time.perf_counter()
    for _ in range(pulls):
        arm = int(mab.predict())
        mab.partial_fit([arm], [float(world.sample(np.array([arm]), rng)[0])])
    seconds = time.perf_counter() - start
    from importlib.metadata import version

    return {
        "version": version("mabwiser"),
        "n_arms": n_arms,
        "timed_pulls": pulls,
        "us_per_pull": 1e6 * seconds / pulls,
    }


def ours_on_mabwiser_task(n_arms: int, batches: list[int]) -> list[dict[str, Any]]:
    """Our epsilon-greedy on the same 10k arms, whole run with the same budget."""
    world = SyntheticWorld(n_arms, seed=0)
    out = []
    for batch in batches:
        policy = make_policy(
            "epsilon_greedy",
            n_arms,
            K,
            np.random.default_rng(0),
            budget=int(RHO * n_arms),
            cap=10,
            epsilon=0.7,
        )
        timing = time_window(policy, world, batch, int(RHO * n_arms))
        out.append({"batch": batch, **timing})
    return out


def markdown(report: dict[str, Any]) -> str:
    """Tables for bench/README.md."""
    rows = report["policies"]
    batches = [t["batch"] for t in rows[0]["timings"]]
    head = ["policy", "|T|", *(f"b={b} us/pull" for b in batches), "state B/topic", "peak B/topic"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"{t['us_per_pull']:.2f}" for t in r["timings"]]
        lines.append(
            f"| {r['policy']} | {r['n_topics']:,} | "
            + " | ".join(cells)
            + f" | {r['state_bytes_per_topic']:.0f} | {r['peak_bytes_per_topic']:.0f} |"
        )
    mab = report.get("mabwiser")
    if mab:
        lines += [
            "",
            f"MABWiser {mab['version']} EpsilonGreedy, {mab['n_arms']:,} arms: "
            f"{mab['us_per_pull']:,.0f} us/pull.",
            "",
            "| our epsilon_greedy, batch | us/pull | speed-up vs MABWiser |",
            "|---|---|---|",
        ]
        for row in report["ours_on_mabwiser_task"]:
            lines.append(
                f"| {row['batch']} | {row['us_per_pull']:.2f} | "
                f"{row['speedup_vs_mabwiser']:,.0f}x |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--render", type=Path, help="print the tables of an existing JSON")
    args = parser.parse_args()
    if args.render:
        print(markdown(json.loads(args.render.read_text())))
        return

    sizes = [1_000_000] if args.quick else [1_000_000, 10_000_000]
    batches = [100, 10_000] if args.quick else [10, 100, 1_000, 10_000]
    window = 50_000 if args.quick else 300_000
    report: dict[str, Any] = {
        "machine": {"cpu_count": os.cpu_count(), "python": platform.python_version()},
        "numpy": np.__version__,
        "rho": RHO,
        "policies": [],
    }
    for n in sizes:
        for name, params in POLICIES:
            row = measure_policy(name, params, n, batches, window)
            report["policies"].append(row)
            cells = ", ".join(
                f"b={t['batch']}: {t['us_per_pull']:.2f} us/pull" for t in row["timings"]
            )
            print(
                f"{name:20s} n={n:>10,}  {cells}  state {row['state_bytes_per_topic']:.0f} B/topic"
                f"  peak {row['peak_bytes_per_topic']:.0f} B/topic"
                f"  json {row['serialized_bytes_per_topic']:.1f} B/topic",
                flush=True,
            )
    mab = mabwiser_per_pull(10_000, 100 if args.quick else 300)
    ours = ours_on_mabwiser_task(10_000, [10, 100, 1_000])
    report["mabwiser"] = mab
    report["ours_on_mabwiser_task"] = ours
    if mab is None:
        print("MABWiser not installed: .venv/bin/pip install -r bench/requirements.txt")
    else:
        for row in ours:
            row["speedup_vs_mabwiser"] = mab["us_per_pull"] / row["us_per_pull"]
            print(
                f"10k arms, budget {int(RHO * 10_000)}: MABWiser {mab['us_per_pull']:.0f} us/pull,"
                f" ours b={row['batch']} {row['us_per_pull']:.2f} us/pull"
                f" -> {row['speedup_vs_mabwiser']:,.0f}x",
                flush=True,
            )
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "bandit_speed_quick" if args.quick else "bandit_speed"
    (args.out / f"{stem}.json").write_text(json.dumps(report, indent=1))
    (args.out / f"{stem}.md").write_text(markdown(report) + "\n")


if __name__ == "__main__":
    main()
