"""Speed of DEC (seed 002 Eq. 1) at 10k segments × 20 systems × 10 language pairs.

Synthetic ESA-like data (integer scores 0–100 with many ties and a ceiling at 100, like WMT24;
one latent difficulty per source shared by all pairs; a length-like integer estimator with ties).

Part 1, pure maths, measured in the same run:

* ``difficulty.dec.dec`` on per-pair (segments × systems) matrices — the platform's path;
* ``difficulty.dec.dec_from_arrays`` on 2M flat cells (pivots first) — the calibration path;
* a naive baseline: one long pandas DataFrame (a row per cell) grouped by (pair, system) with the
  public ``scipy.stats.kendalltau`` per group, as one writes it in a notebook;
  the results must agree to 1e-12;
* hardest-subset selection and the cost of one bootstrap resample.

Part 2 (skip with ``--no-db``), the whole platform path on a throwaway SQLite database: import
the dataset as JSONL through ``import_difficulty_dataset``, then ``evaluate_difficulty``'s
foreground run of ``length`` and ``oracle-src`` (no bootstrap): loading the compact score
matrices, tokenizing 10k distinct sources with wordfreq, DEC, subsets, results.

    .venv/bin/python bench/dec_speed.py                 # ~3 min on 2 cores
    .venv/bin/python bench/dec_speed.py --no-db --repeats 1

Writes bench/results/dec_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"

from difficulty import dec  # noqa: E402  (after the path set-up above)

VOCABULARY = (
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when if so "
    "no what up out them about into than more some could time only other new these two may "
    "first then any like now my such make over our even most after also did many before must "
    "through back years where much your way down should because each just those people how too "
    "little state good very world still own see men work long get here between both life being "
    "under never day same another know while last might us great old year off come since "
    "against go came right used take three parliament amendment jurisdiction photosynthesis"
).split()


TARGETS = ("cs", "de", "es", "hi", "is", "ja", "ru", "uk", "zh", "fr")


def synthetic(n_segments: int, n_systems: int, n_pairs: int, seed: int):
    """Latent difficulty per source; length grows with it; scores = ceiling-clipped noise."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n_segments)
    lengths = np.clip(np.round(12 + 6 * latent + rng.normal(0, 5, n_segments)), 1, 80).astype(int)
    pairs = []
    for p in range(n_pairs):
        pair_shift = rng.normal(0, 3)
        system_skill = rng.normal(0, 6, n_systems)
        raw = (
            92
            + pair_shift
            - 9 * latent[:, None]
            + system_skill[None, :]
            + rng.normal(0, 14, (n_segments, n_systems))
        )
        human = np.clip(np.round(raw), 0, 100)
        pairs.append((f"en-{TARGETS[p]}", human))
    return lengths, pairs


def blocks_for(estimate: np.ndarray, pairs, n_systems: int) -> list[dec.LanguagePairBlock]:
    systems = tuple(f"sys{j:02d}" for j in range(n_systems))
    return [dec.LanguagePairBlock(code, human, estimate, systems) for code, human in pairs]


def naive_dec(estimate: np.ndarray, pairs, n_systems: int) -> tuple[float, dict]:
    """Long format, group by (pair, system), public scipy per group, mean, mean."""
    import pandas as pd
    from scipy.stats import kendalltau

    started = time.perf_counter()
    frames = []
    n = estimate.size
    for code, human in pairs:
        frames.append(
            pd.DataFrame(
                {
                    "lp": code,
                    "segment": np.repeat(np.arange(n), n_systems),
                    "system": np.tile([f"sys{j:02d}" for j in range(n_systems)], n),
                    "estimate": np.repeat(estimate, n_systems),
                    "human": human.ravel(),
                }
            )
        )
    long = pd.concat(frames, ignore_index=True)
    built = time.perf_counter() - started
    taus = long.groupby(["lp", "system"]).apply(
        lambda g: kendalltau(g["estimate"], g["human"], variant="b").statistic,
        include_groups=False,
    )
    value = float(taus.groupby(level="lp").mean().mean())
    return value, {"build_long_frame_s": round(built, 3)}


def timed(fn, repeats: int):
    times = []
    result = None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return result, min(times), times


def part_maths(args) -> dict:
    n, s, lps = args.segments, args.systems, args.pairs
    lengths, pairs = synthetic(n, s, lps, args.seed)
    estimate = -lengths.astype(float)
    blocks = blocks_for(estimate, pairs, s)

    ours, ours_s, ours_all = timed(lambda: dec.dec(blocks, with_pearson=False), args.repeats)
    full, full_s, _ = timed(lambda: dec.dec(blocks), args.repeats)

    flat_est = np.concatenate([np.repeat(estimate, s) for _ in pairs])
    flat_human = np.concatenate([h.ravel() for _, h in pairs])
    flat_sys = np.tile(np.arange(s), n * lps)
    flat_lp = np.repeat(np.arange(lps), n * s)
    arrays, arrays_s, _ = timed(
        lambda: dec.dec_from_arrays(flat_est, flat_human, flat_sys, flat_lp), args.repeats
    )

    try:
        (naive, naive_extra), naive_s, naive_all = timed(
            lambda: naive_dec(estimate, pairs, s), args.repeats
        )
    except ImportError:
        naive, naive_extra, naive_s, naive_all = (
            None,
            {"error": "pandas is not installed"},
            None,
            [],
        )

    subset, subset_s, _ = timed(lambda: dec.hardest_subset(blocks, 0.25), args.repeats)
    rng = np.random.default_rng(0)
    _samples, boot_s, _ = timed(lambda: dec.bootstrap_dec(blocks, rng, args.bootstrap), 1)

    assert abs(arrays.dec - ours.dec) < 1e-12, (arrays.dec, ours.dec)
    if naive is not None:
        assert abs(naive - ours.dec) < 1e-12, (naive, ours.dec)
    return {
        "shape": {"segments": n, "systems": s, "language_pairs": lps, "cells": n * s * lps},
        "dec": ours.dec,
        "pearson": full.pearson,
        "hardest_25pct_avg_score": subset.avg_score,
        "seconds": {
            "dec_kendall_only": round(ours_s, 3),
            "dec_kendall_and_pearson": round(full_s, 3),
            "dec_from_flat_arrays": round(arrays_s, 3),
            "naive_pandas_groupby_kendalltau": None if naive_s is None else round(naive_s, 3),
            "hardest_subset": round(subset_s, 4),
            f"bootstrap_{args.bootstrap}_resamples": round(boot_s, 3),
            "bootstrap_per_resample": round(boot_s / max(1, args.bootstrap), 3),
        },
        "all_runs_s": {
            "dec_kendall_only": [round(t, 3) for t in ours_all],
            "naive": [round(t, 3) for t in naive_all],
        },
        "naive_extra": naive_extra,
        "speedup_vs_naive": None if naive_s is None else round(naive_s / ours_s, 2),
        "results_agree": True,
    }


def setup_django(var_dir: str) -> None:
    import secrets

    os.environ["HARDSET_VAR_DIR"] = var_dir
    # As deployed: with DEBUG on, Django would also keep the text of every bulk INSERT.
    os.environ["DEBUG"] = "false"
    os.environ["SECRET_KEY"] = secrets.token_urlsafe(50)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def part_platform(args, folder: Path) -> dict:
    setup_django(str(folder))
    from difficulty import services

    n, s, lps = args.segments, args.systems, args.pairs
    lengths, pairs = synthetic(n, s, lps, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    sources = [
        f"{i} " + " ".join(rng.choice(VOCABULARY, size=length - 1))
        for i, length in enumerate(lengths)
    ]
    path = folder / "synthetic.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for code, human in pairs:
            for i, source in enumerate(sources):
                scores = {f"sys{j:02d}": float(v) for j, v in enumerate(human[i])}
                out.write(
                    json.dumps(
                        {
                            "langs": code,
                            "line_id": i,
                            "src": source,
                            "tgt": {name: "t" for name in scores},
                            "scores": scores,
                        }
                    )
                    + "\n"
                )
    size_mb = path.stat().st_size / 1e6
    started = time.perf_counter()
    with path.open("rb") as lines:
        dataset = services.import_difficulty_dataset(lines, name="bench")
    import_s = time.perf_counter() - started

    started = time.perf_counter()
    evaluation = services.start_difficulty_evaluation(
        dataset, ["length", "oracle-src"], n_bootstrap=0, enqueue=False
    )
    evaluation = services.run_difficulty_evaluation(evaluation.pk)
    evaluate_s = time.perf_counter() - started
    assert evaluation.status == "done", evaluation.error
    return {
        "jsonl_mb": round(size_mb, 1),
        "import_s": round(import_s, 1),
        "evaluate_length_and_oracle_s": round(evaluate_s, 1),
        "dec_length": evaluation.results["estimators"]["length"]["dec"],
        "dec_oracle_src": evaluation.results["estimators"]["oracle-src"]["dec"],
        "units": evaluation.progress_total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=10, choices=range(1, len(TARGETS) + 1))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=5, help="Resamples to time.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-db", action="store_true", help="Skip the platform (database) part.")
    args = parser.parse_args()

    report = {
        "machine": {
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            # The development machine is shared: a high load makes every number slower.
            "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
        },
        "maths": part_maths(args),
    }
    print(json.dumps(report["maths"], indent=2))
    if not args.no_db:
        with tempfile.TemporaryDirectory(prefix="dec-bench-") as folder:
            report["platform"] = part_platform(args, Path(folder))
        print(json.dumps(report["platform"], indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "dec_speed.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
