"""Cost of the estimator significance clusters (PERM-BOTH, seed 002 Tables 7–8).

Times :func:`difficulty.dec_significance.perm_both_pvalues` (every pair of estimators, at most
1000 resamples each with early stopping, ranks overall and per language pair) for eight
estimators (28 pairs) on:

* the real WMT24 en-cs ESA file in ``../shared/data`` (297 segments × 15 MT systems): text
  length, characters, word rarity, two oracles, two noisy oracles and a per-cell random draw;
* a synthetic dataset the size of the whole WMT24 ESA test set (seed 002 Table 5: eight
  English→X pairs of 634 segments with 11–16 systems and cs→uk with 1954 × 12), integer scores
  with ties, eight estimators of graded quality (some with ties).

    .venv/bin/python bench/dec_significance_speed.py            # both, ~1–3 min on 2 cores
    .venv/bin/python bench/dec_significance_speed.py --no-full  # the real file only

Writes bench/results/dec_significance_speed.json. OpenBLAS is held to one thread, as a worker
process shares the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"

from difficulty import dec  # noqa: E402  (after the path set-up above)
from difficulty import dec_significance as sig  # noqa: E402

WMT24_PAIRS = {  # seed 002 Table 5: (source texts, translators)
    "cs-uk": (1954, 12),
    "en-cs": (634, 16),
    "en-es": (634, 14),
    "en-hi": (634, 11),
    "en-is": (634, 11),
    "en-ja": (634, 13),
    "en-ru": (634, 14),
    "en-uk": (634, 11),
    "en-zh": (634, 13),
}


def _rarity(text: str) -> float:
    import wordfreq

    tokens = wordfreq.tokenize(text, "en")
    return float(np.mean([wordfreq.word_frequency(t, "en") for t in tokens])) if tokens else 0.0


def real_estimators(path: Path, seed: int) -> dict[str, list[dec.LanguagePairBlock]]:
    import wordfreq

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    systems = tuple(sorted(s for s in rows[0]["scores"] if s != "refA"))
    human = np.array([[row["scores"].get(s, np.nan) for s in systems] for row in rows], float)
    sources = [row["src"] for row in rows]
    rng = np.random.default_rng(seed)
    oracle = np.nanmean(human, axis=1)
    estimates = {
        "length": np.array([-len(wordfreq.tokenize(s, "en")) for s in sources], float),
        "chars": np.array([-len(s) for s in sources], float),
        "rarity": np.array([_rarity(s) for s in sources]),
        "oracle-src-lang": oracle,
        "oracle-cell": human.copy(),
        "noisy-oracle-10": oracle + rng.normal(0, 10, oracle.size),
        "noisy-oracle-20": np.round(oracle + rng.normal(0, 20, oracle.size)),
        "random": rng.random(human.shape),
    }
    return {
        name: [dec.LanguagePairBlock("en-cs", human, values, systems)]
        for name, values in estimates.items()
    }


def synthetic_wmt24(seed: int) -> dict[str, list[dec.LanguagePairBlock]]:
    rng = np.random.default_rng(seed)
    noise = {"e0": 3, "e1": 8, "e2": 12, "e3": 16, "e4": 16.5, "e5": 25, "e6": 40, "e7": None}
    blocks: dict[str, list[dec.LanguagePairBlock]] = {name: [] for name in noise}
    for code, (n, systems) in WMT24_PAIRS.items():
        latent = rng.normal(size=n)
        raw = 88 - 8 * latent[:, None] + rng.normal(0, 6, systems) + rng.normal(0, 14, (n, systems))
        human = np.clip(np.round(raw), 0, 100)
        names = tuple(f"sys{j:02d}" for j in range(systems))
        for name, sd in noise.items():
            if sd is None:
                values = rng.random(n)
            else:
                values = -latent * 10 + rng.normal(0, sd, n)
                if name in {"e2", "e6"}:
                    values = np.round(values)  # integer scores: ties, like an LLM judge's
            blocks[name].append(dec.LanguagePairBlock(code, human, values, names))
    return blocks


def measure(blocks: dict[str, list[dec.LanguagePairBlock]], seed: int) -> dict:
    started, cpu_started = time.perf_counter(), time.process_time()
    result = sig.perm_both_pvalues(blocks, rng=np.random.default_rng(seed))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    used = [test.n_resamples for test in result.tests.values()]
    first = next(iter(blocks.values()))
    return {
        "language_pairs": len(first),
        "cells": int(sum((~np.isnan(b.human)).sum() for b in first)),
        "work_units_per_resample": sig.work_units(first),
        "estimators": len(blocks),
        "pairs_tested": len(result.tests),
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),  # this process's CPU time: what a quiet core would take
        "cpu_seconds_per_pair": round(cpu / max(1, len(result.tests)), 3),
        "resamples_used": {"min": min(used), "max": max(used), "total": sum(used)},
        "ranking": dict(zip(result.overall.names, result.overall.ranks, strict=True)),
        "dec": {
            n: round(v, 4) for n, v in zip(result.overall.names, result.overall.dec, strict=True)
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--no-full", action="store_true", help="skip the WMT24-sized dataset")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    report: dict = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "load_average": os.getloadavg(),
    }
    wmt = args.data / "wmt24_esa_en-cs.jsonl"
    if wmt.exists():
        report["wmt24_en_cs"] = measure(real_estimators(wmt, args.seed), args.seed)
        print(json.dumps(report["wmt24_en_cs"], indent=2))
    else:
        print(f"{wmt} is absent: skipping the real file")
    if not args.no_full:
        report["wmt24_sized"] = measure(synthetic_wmt24(args.seed), args.seed)
        print(json.dumps(report["wmt24_sized"], indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dec_significance_speed.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
