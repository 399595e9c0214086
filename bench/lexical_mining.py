"""Mining throughput and peak memory (seed 004 §2.1; issue 14), against bare eflomal alignment.

For each corpus size (synthetic English→Spanish pairs from ``lexical.mining.synthetic``, written
to a TSV file first, outside the measurement) two child processes run, so that each one's peak
resident memory is its own:

* ``align``: the bare alignment step: read the file in chunks, split on whitespace, align each
  chunk with eflomal (the same chunk size);
* ``mine``: the whole pure pipeline, end to end: read the file in chunks, tokenise and lemmatise
  both sides (simplemma), align (eflomal), count the links, filter (App. B.1), then the second
  pass that collects example pairs for the concepts found.

Reported per size: pairs/s of both, their ratio (mine / align, in seconds), peak RSS (MB) of
both, and whether the planted concepts were mined exactly. Goal (issue 14): 1M pairs mined
within 10 minutes and 2 GB on the 2-core development machine, memory not growing with the
corpus beyond the counts (compare the peak RSS across sizes). The job in workers adds database
reads and one state write per round on top (``lexical.mining.services``).

    .venv/bin/python bench/lexical_mining.py --sizes 100000            # ~1-2 min
    .venv/bin/python bench/lexical_mining.py                            # 100k and 1M

Writes bench/results/lexical_mining.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _pairs(path: Path):
    with path.open(encoding="utf-8") as handle:
        for i, line in enumerate(handle, start=1):
            src, _, tgt = line.rstrip("\n").partition("\t")
            yield (i, src, tgt)


def _peak_mb() -> float:
    """Peak resident memory of this process or of its largest child (eflomal's Python API runs
    the ``eflomal`` binary as a child process, one per chunk), whichever is higher."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def _cpu_s() -> float:
    """CPU seconds of this process and its children (the eflomal binary and its sampler
    threads): on a machine shared with other jobs, a steadier measure than the wall clock."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def child_align(path: Path, chunk_size: int) -> dict:
    from lexical.mining.alignment import align
    from lexical.mining.pipeline import chunked

    start, cpu = time.perf_counter(), _cpu_s()
    n = 0
    for chunk in chunked(_pairs(path), chunk_size):
        src = [s.lower().split() for _, s, _ in chunk]
        tgt = [t.lower().split() for _, _, t in chunk]
        align(src, tgt)
        n += len(chunk)
    return {
        "pairs": n,
        "seconds": time.perf_counter() - start,
        "cpu_seconds": _cpu_s() - cpu,
        "peak_rss_mb": _peak_mb(),
    }


def child_mine(path: Path, chunk_size: int) -> dict:
    from lexical.mining.params import MiningParams
    from lexical.mining.pipeline import mine
    from lexical.mining.synthetic import expected_concepts

    start, cpu = time.perf_counter(), _cpu_s()
    result = mine(lambda: _pairs(path), "en", "es", MiningParams(chunk_size=chunk_size))
    seconds = time.perf_counter() - start
    mined = {c.lemma: dict(c.variations) for c in result.concepts}
    return {
        "pairs": result.counts.pairs_read,
        "seconds": seconds,
        "cpu_seconds": _cpu_s() - cpu,
        "peak_rss_mb": _peak_mb(),
        "concepts": len(result.concepts),
        "planted_exact": mined == expected_concepts(),
        "distinct_links": len(result.counts.links),
        "stats": result.stats.as_dict(),
    }


def _write_corpus(path: Path, n: int, seed: int) -> None:
    from lexical.mining.synthetic import generate

    with path.open("w", encoding="utf-8") as handle:
        for pair in generate(n, seed=seed):
            handle.write(f"{pair.src}\t{pair.tgt}\n")


def _run_child(mode: str, path: Path, chunk_size: int) -> dict:
    command = [sys.executable, __file__, "--child", mode, str(path), str(chunk_size)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="Comma-separated pair counts.")
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--child", nargs=3, metavar=("MODE", "FILE", "CHUNK"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        mode, file, chunk = args.child
        run = child_align if mode == "align" else child_mine
        print(json.dumps(run(Path(file), int(chunk))))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="hardset-bench-mining-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"corpus-{size}.tsv"
            _write_corpus(path, size, args.seed)
            align = _run_child("align", path, args.chunk_size)
            mined = _run_child("mine", path, args.chunk_size)
            row = {
                "pairs": size,
                "chunk_size": args.chunk_size,
                "align_seconds": round(align["seconds"], 2),
                "align_pairs_per_s": round(size / align["seconds"], 1),
                "align_peak_rss_mb": round(align["peak_rss_mb"], 1),
                "mine_seconds": round(mined["seconds"], 2),
                "mine_pairs_per_s": round(size / mined["seconds"], 1),
                "mine_peak_rss_mb": round(mined["peak_rss_mb"], 1),
                "time_ratio_mine_to_align": round(mined["seconds"] / align["seconds"], 3),
                "align_cpu_seconds": round(align["cpu_seconds"], 2),
                "mine_cpu_seconds": round(mined["cpu_seconds"], 2),
                "cpu_ratio_mine_to_align": round(mined["cpu_seconds"] / align["cpu_seconds"], 3),
                "planted_exact": mined["planted_exact"],
                "concepts": mined["concepts"],
                "distinct_links": mined["distinct_links"],
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            path.unlink()
    print(
        "| pairs | align s | align pairs/s | mine s | mine pairs/s | mine/align "
        "| CPU s align / mine (ratio) | align RSS MB | mine RSS MB | planted exact |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |")
    for r in rows:
        print(
            f"| {r['pairs']:,} | {r['align_seconds']} | {r['align_pairs_per_s']} | "
            f"{r['mine_seconds']} | {r['mine_pairs_per_s']} | {r['time_ratio_mine_to_align']} | "
            f"{r['align_cpu_seconds']} / {r['mine_cpu_seconds']} "
            f"({r['cpu_ratio_mine_to_align']}) | "
            f"{r['align_peak_rss_mb']} | {r['mine_peak_rss_mb']} | {r['planted_exact']} |"
        )
    results = REPO / "bench" / "results"
    results.mkdir(exist_ok=True)
    report = {"machine": platform.platform(), "cpus": os.cpu_count(), "rows": rows}
    (results / "lexical_mining.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
