"""Throughput of the engine call path against a local OpenAI-compatible server.

The server (tests/engines/fake_openai.py, a real HTTP server on 127.0.0.1) answers every
request after a fixed latency (200 ms). We translate batches of distinct texts through the real
call path — registry → CallPath → limiter → httpx → parser → ledger — with the cache off, at
max_concurrency 1, 8 and 32, and report calls/s and the ratio to the ideal
(concurrency / latency). Target: at least 0.8 of ideal at 32.

    .venv/bin/python bench/engine_throughput.py            # ~30 s
    .venv/bin/python bench/engine_throughput.py --seconds 2 --concurrency 1 8

Runs on its own throwaway SQLite database (and file-lock limiter) under a temporary folder;
writes bench/results/engine_throughput.json.
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

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"


def setup_django(var_dir: str) -> None:
    os.environ["HARDSET_VAR_DIR"] = var_dir
    os.environ["DEBUG"] = "true"
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def measure(concurrency: int, latency: float, seconds: float, server) -> dict:
    from engines.models import Engine, EngineCall
    from engines.registry import resolve

    engine, _ = Engine.objects.update_or_create(
        name="bench",
        defaults={
            "kind": "openai_chat",
            "capabilities": ["translate"],
            "model": "bench-model",
            "base_url": server.base_url,
            "max_concurrency": concurrency,
            "timeout_s": 30,
            "max_retries": 0,
        },
    )
    n_calls = max(concurrency, round(seconds * concurrency / latency))
    texts = [f"benchmark sentence {concurrency}-{i}" for i in range(n_calls)]
    translator = resolve(engine, "translate", scope=f"bench:{concurrency}", use_cache=False)
    server.max_in_flight = 0
    start = time.perf_counter()
    outputs = translator.translate(texts, "en", "de")
    elapsed = time.perf_counter() - start
    assert outputs == [f"[xx] {text}" for text in texts], "wrong translations"
    rows = EngineCall.objects.filter(scope=f"bench:{concurrency}").count()
    assert rows == n_calls, f"expected {n_calls} ledger rows, found {rows}"
    ideal = concurrency / latency
    rate = n_calls / elapsed
    return {
        "concurrency": concurrency,
        "calls": n_calls,
        "seconds": round(elapsed, 3),
        "calls_per_s": round(rate, 2),
        "ideal_calls_per_s": round(ideal, 2),
        "ratio_to_ideal": round(rate / ideal, 3),
        "max_in_flight_seen_by_server": server.max_in_flight,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2, help="server latency in seconds")
    parser.add_argument("--seconds", type=float, default=5.0, help="ideal duration per level")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--output", default=str(RESULTS / "engine_throughput.json"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hardset-bench-") as var_dir:
        setup_django(var_dir)
        from tests.engines.fake_openai import FakeOpenAI

        results = []
        with FakeOpenAI(latency=args.latency, record=False) as server:
            for concurrency in args.concurrency:
                row = measure(concurrency, args.latency, args.seconds, server)
                results.append(row)
                print(
                    f"concurrency {row['concurrency']:>3}: {row['calls']:>4} calls in "
                    f"{row['seconds']:6.2f} s = {row['calls_per_s']:7.2f} calls/s "
                    f"(ideal {row['ideal_calls_per_s']:6.1f}, ratio {row['ratio_to_ideal']:.3f}, "
                    f"max in flight {row['max_in_flight_seen_by_server']})"
                )
    report = {
        "benchmark": "engine_throughput",
        "latency_s": args.latency,
        "cache": False,
        "limiter": "file (SQLite)",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "results": results,
    }  # fmt: skip
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.output}")
    at_32 = [r for r in results if r["concurrency"] == 32]
    if at_32 and at_32[0]["ratio_to_ideal"] < 0.8:
        print("below target: ratio to ideal at concurrency 32 is under 0.8")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
