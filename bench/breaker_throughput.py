"""MT-breaker runs against a local OpenAI-compatible server: wall time vs the ideal (issue 13).

100 chains × 10 edits of MT-breaker (seeded + QE, seed 001 Alg. 1: step 0 is the seed, then
10 edits, so 11 evaluated steps per chain) run through the platform (``start_breaker_run`` +
``run_in_foreground``: claims, the engine call path with its limiter, cache and ledger, the
stored steps). The LLM, the target translator and the GEMBA-style QE are three engines of kind
``openai_chat`` on the test server (``tests/engines/fake_openai.py``, its ``breaker_reply``
answering the breaker, translation and QE prompts in their formats), started in a separate
process so that it does not share the benchmark's interpreter lock. Measured in the same run:

* ``latency``: the median round trip of single requests to the slow server (200 ms asked);
* ``ideal`` = rounds' sequential stages × waves × latency, where a stage is one engine's batch
  (step 0: translate, QE; an edit: LLM, translate, QE) and ``waves`` = ceil(chains /
  max_concurrency): chains in parallel within each engine's limit;
* ``bare``: the same chats, translations and scores sent by a bare loop (pure prompt and parser
  modules, one httpx client and thread pool per engine, no database): what the HTTP client and
  the server themselves cost;
* the platform against the slow server (ratio to ideal, goal ≤ 1.4) and against an instant
  (0 ms) server (wall ÷ steps = bookkeeping per step, goal ≤ 5 ms; minus the bare loop's time:
  the platform's own share).

    .venv/bin/python bench/breaker_throughput.py                      # SQLite and PostgreSQL
    .venv/bin/python bench/breaker_throughput.py --db sqlite --repeats 1 --concurrency 100

SQLite is a throwaway file under a temporary folder; PostgreSQL a throwaway database
``hardset_bench_breaker_<pid>`` on ``--pg-url`` (dropped afterwards). Writes
bench/results/breaker_throughput.json; exits non-zero when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"
RATIO_GOAL = 1.4
MS_PER_STEP_GOAL = 5.0
SRC, TGT = "en", "cs"
WORDS = ("river morning market station winter garden letter window bridge harvest teacher "
         "village kitchen evening journey lantern meadow harbour").split()  # fmt: skip


def seed_texts(n: int, run: int) -> list[str]:
    """``n`` distinct seed sentences of 20 words, numbered by ``run``: the fake editor's edits
    follow from the seed, so runs with the same seeds would be answered from the cache."""
    texts = []
    for i in range(n):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(17)]
        texts.append(f"Run {run}, seed {i}: " + " ".join(words) + ".")
    return texts


# --- The server, in its own process ------------------------------------------------------------


def serve(latency: float) -> None:
    from tests.engines.fake_openai import FakeOpenAI, breaker_reply

    with FakeOpenAI(breaker_reply, latency=latency, record=False) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin


class ServerProcess:
    def __init__(self, latency: float) -> None:
        command = [sys.executable, __file__, "--serve", str(latency)]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


# --- Baselines: the server's latency and the bare loop ---------------------------------------


def measured_latency(base_url: str, n: int = 15) -> float:
    from engines.openai_client import ChatClient
    from engines.prompts import translate_prompt

    with ChatClient(base_url, "m", api_key=None, timeout_s=30, max_connections=1) as client:
        client.complete([{"role": "user", "content": "warm-up"}], {})
        times = []
        for i in range(n):
            prompt = translate_prompt(f"latency probe {i}", SRC, TGT)
            start = time.perf_counter()
            client.complete(prompt.messages, {})
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def bare_loop(base_url: str, seeds: list[str], n_steps: int, concurrency: int, tag: str) -> float:
    """The run's requests without the platform: seconds of wall time."""
    from engines import prompts as engine_prompts
    from engines.openai_client import ChatClient
    from search.breaker import prompts
    from search.breaker.parsing import parse_source, word_count

    def client(model: str) -> ChatClient:
        return ChatClient(base_url, model, api_key=None, timeout_s=60, max_connections=concurrency)

    llm, mt, qe = client("bare-llm"), client("bare-mt"), client("bare-qe")
    pool = ThreadPoolExecutor(max_workers=concurrency)

    def ask(chat: ChatClient, conversations: list) -> list[str]:
        return [c.text for c in pool.map(lambda m: chat.complete(m, {}), conversations)]

    firsts = [
        prompts.first_prompt(SRC, TGT, word_count(s), f"{tag}-{i}") for i, s in enumerate(seeds)
    ]
    views: list[list[prompts.StepView]] = [[] for _ in seeds]
    start = time.perf_counter()
    for step in range(n_steps + 1):
        llm_texts = [""] * len(seeds)
        sources = list(seeds)
        if step:
            chats = [
                prompts.conversation(first, done, qe_feedback=True, max_edit_share=0.75)
                for first, done in zip(firsts, views, strict=True)
            ]
            llm_texts = ask(llm, chats)
            sources = [parse_source(text) for text in llm_texts]
        asked = [engine_prompts.translate_prompt(s, SRC, TGT).messages for s in sources]
        translations = [engine_prompts.parse_translation(t) for t in ask(mt, asked)]
        pairs = zip(sources, translations, strict=True)
        asked = [engine_prompts.qe_prompt(s, t, SRC, TGT).messages for s, t in pairs]
        scores = [engine_prompts.parse_score(t) for t in ask(qe, asked)]
        for i, view in enumerate(views):
            view.append(
                prompts.StepView(sources[i], llm_texts[i], [translations[i]], [scores[i]],
                                 scores[i])
            )  # fmt: skip
    wall = time.perf_counter() - start
    pool.shutdown()
    for chat in (llm, mt, qe):
        chat.close()
    return wall


# --- The platform ----------------------------------------------------------------------------


def setup_django(var_dir: str, database_url: str | None) -> None:
    import secrets

    os.environ.update(HARDSET_VAR_DIR=var_dir, DEBUG="false", SECRET_KEY=secrets.token_urlsafe(50))
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def make_engines(base_url: str, suffix: str, concurrency: int) -> dict[str, str]:
    from decimal import Decimal

    from engines.models import Engine

    names = {}
    for role in ("llm", "mt", "qe"):
        capability = {"llm": "chat", "mt": "translate", "qe": "quality"}[role]
        engine, _ = Engine.objects.update_or_create(
            name=f"{role}-{suffix}",
            defaults={
                "kind": "openai_chat",
                "capabilities": [capability],
                "model": f"model-{role}",
                "base_url": base_url,
                "max_concurrency": concurrency,
                "timeout_s": 60,
                "max_retries": 0,
                "price_in_per_1k": Decimal(1),
                "price_out_per_1k": Decimal(2),
            },
        )
        names[role] = engine.name
    return names


def platform_run(engines: dict[str, str], seeds: list[str], n_steps: int, seed: int) -> dict:
    from engines.models import EngineCall
    from search.breaker.services import run_in_foreground, start_breaker_run

    lines = "\n".join(json.dumps({"text": t, "doc_id": f"d{i}"}) for i, t in enumerate(seeds))
    config = {
        "name": f"bench {seed}", "method": "breaker_seeded_qe", "llm": engines["llm"],
        "targets": [engines["mt"]], "qe": [engines["qe"]], "src_lang": SRC, "tgt_lang": TGT,
        "seeds": {"from": "jsonl", "lines": lines, "file": "seeds.jsonl"},
        "n_steps": n_steps, "seed": seed,
    }  # fmt: skip
    run = start_breaker_run(config, enqueue=False)
    start = time.perf_counter()
    run = run_in_foreground(run.pk)
    wall = time.perf_counter() - start
    calls = EngineCall.objects.filter(scope=run.scope)
    expected_steps = len(seeds) * (n_steps + 1)
    assert run.status == "finished" and not run.error, (run.status, run.error)
    assert run.steps_done == expected_steps, (run.steps_done, expected_steps)
    sent = calls.filter(cache_hit=False, error="").count()
    assert sent == len(seeds) * (3 * n_steps + 2), f"{sent} requests sent"
    assert not calls.filter(cache_hit=True).exists(), "a benchmark run must not hit the cache"
    return {"wall_s": wall, "steps": run.steps_done, "requests": sent, "rounds": run.round_index}


def measure_db(args: argparse.Namespace, database_url: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="hardset-bench-") as var_dir:
        setup_django(var_dir, database_url)
        from django.db import connection

        slow, instant = ServerProcess(args.latency), ServerProcess(0.0)
        try:
            latency = measured_latency(slow.base_url)
            instant_latency = measured_latency(instant.base_url)
            rows = []
            seed = 0
            for concurrency in args.concurrency:
                waves = math.ceil(args.chains / concurrency)
                stages = 2 + 3 * args.steps
                ideal = stages * waves * latency
                engines = {
                    "slow": make_engines(slow.base_url, f"slow-{concurrency}", concurrency),
                    "instant": make_engines(instant.base_url, f"inst-{concurrency}", concurrency),
                }
                for repeat in range(args.repeats):
                    row = {"concurrency": concurrency, "repeat": repeat, "ideal_s": ideal}
                    for name, server in (("slow", slow), ("instant", instant)):
                        seed += 1
                        row[f"bare_{name}_s"] = bare_loop(
                            server.base_url, seed_texts(args.chains, -seed), args.steps,
                            concurrency, f"bare{seed}",
                        )  # fmt: skip
                        seeds = seed_texts(args.chains, seed)
                        result = platform_run(engines[name], seeds, args.steps, seed)
                        row[f"platform_{name}_s"] = result["wall_s"]
                        row["steps"], row["requests"] = result["steps"], result["requests"]
                        print(f"  {connection.vendor} c={concurrency} #{repeat} {name}: "
                              f"bare {row[f'bare_{name}_s']:.2f} s, platform "
                              f"{result['wall_s']:.2f} s", file=sys.stderr, flush=True)  # fmt: skip
                    rows.append(row)
        finally:
            slow.close()
            instant.close()
        import search.breaker.services

        return {
            "database": connection.vendor,
            "code_path": search.breaker.services.__file__,
            "latency_s": latency,
            "instant_latency_s": instant_latency,
            "rows": rows,
        }


# --- Orchestration -------------------------------------------------------------------------


def _pg_database(pg_url: str, name: str, create: bool) -> str:
    import psycopg
    from psycopg import sql

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        if create:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return pg_url.rsplit("/", 1)[0] + "/" + name


def _pg_free_connections(pg_url: str) -> int:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        limit = int(conn.execute("SHOW max_connections").fetchone()[0])
        used = conn.execute("SELECT count(*) FROM pg_stat_activity").fetchone()[0]
    return limit - used


def _child(args: argparse.Namespace, db: str, code: str | None = None) -> dict:
    levels = list(args.concurrency)
    skipped = []
    if db == "postgres":
        # The PostgreSQL limiter holds one connection per request in flight (engines.limiter).
        free = _pg_free_connections(args.pg_url)
        skipped = [c for c in levels if c + 10 > free]
        levels = [c for c in levels if c + 10 <= free]
        for c in skipped:
            print(f"postgres: skipping concurrency {c}: {free} free connections", file=sys.stderr)
        if not levels:
            return {"database": "postgresql", "code": code, "rows": [], "skipped": skipped}
    command = [sys.executable, __file__, "--part", db, "--chains", str(args.chains),
               "--steps", str(args.steps), "--latency", str(args.latency),
               "--repeats", str(args.repeats), "--concurrency", *map(str, levels)]  # fmt: skip
    if code:
        code = str(Path(code).resolve())
        command += ["--code", code]
    name = f"hardset_bench_breaker_{os.getpid()}"
    if db == "postgres":
        command += ["--database-url", _pg_database(args.pg_url, name, create=True)]
    try:
        # Run from the checkout under test: Celery's app puts the working directory first on
        # sys.path when the settings load.
        out = subprocess.run(
            command, cwd=code or ROOT, check=True, stdout=subprocess.PIPE, text=True
        )
    finally:
        if db == "postgres":
            _pg_database(args.pg_url, name, create=False)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return {**result, "code": code, "skipped": skipped}


def summarize(result: dict) -> list[dict]:
    """Per concurrency: the median over repeats of every ratio."""
    table = []
    for concurrency in sorted({r["concurrency"] for r in result["rows"]}):
        rows = [r for r in result["rows"] if r["concurrency"] == concurrency]

        def med(key: str, rows=rows) -> float:
            return statistics.median(r[key] for r in rows)

        steps = rows[0]["steps"]
        table.append({
            "database": result["database"] + (" (before)" if result.get("code") else ""),
            "concurrency": concurrency,
            "repeats": len(rows),
            "steps": steps,
            "requests": rows[0]["requests"],
            "latency_ms": round(result["latency_s"] * 1000, 1),
            "ideal_s": round(rows[0]["ideal_s"], 2),
            "bare_slow_s": round(med("bare_slow_s"), 2),
            "platform_slow_s": round(med("platform_slow_s"), 2),
            "bare_over_ideal": round(med("bare_slow_s") / rows[0]["ideal_s"], 3),
            "platform_over_ideal": round(med("platform_slow_s") / rows[0]["ideal_s"], 3),
            "bare_instant_s": round(med("bare_instant_s"), 2),
            "platform_instant_s": round(med("platform_instant_s"), 2),
            "ms_per_step_instant": round(med("platform_instant_s") / steps * 1000, 2),
            "platform_ms_per_step_beyond_bare": round(
                (med("platform_instant_s") - med("bare_instant_s")) / steps * 1000, 2
            ),
            "platform_over_bare_instant": round(
                med("platform_instant_s") / med("bare_instant_s"), 2
            ),
        })  # fmt: skip
    return table


def render(table: list[dict]) -> str:
    lines = [
        "| database | max concurrency | measured latency ms | ideal s | bare s (÷ ideal) "
        "| platform s (÷ ideal) | instant: bare s | instant: platform s | ms/step "
        "| ms/step beyond bare |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in table:
        lines.append(
            f"| {r['database']} | {r['concurrency']} | {r['latency_ms']} | {r['ideal_s']} "
            f"| {r['bare_slow_s']} ({r['bare_over_ideal']}) "
            f"| {r['platform_slow_s']} (**{r['platform_over_ideal']}**) | {r['bare_instant_s']} "
            f"| {r['platform_instant_s']} | **{r['ms_per_step_instant']}** "
            f"| {r['platform_ms_per_step_beyond_bare']} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", nargs="+", choices=["sqlite", "postgres"],
                        default=["sqlite", "postgres"])  # fmt: skip
    parser.add_argument("--pg-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--chains", type=int, default=100)
    parser.add_argument("--steps", type=int, default=10, help="edits per chain after the seed")
    parser.add_argument("--latency", type=float, default=0.2, help="server latency in seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[100, 32],
                        help="max_concurrency of every engine")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output", default=str(RESULTS / "breaker_throughput.json"))
    parser.add_argument("--before", help="also run the platform from this checkout (same run)")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--code", help=argparse.SUPPRESS)
    parser.add_argument("--part", choices=["sqlite", "postgres"], help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return 0
    if args.part:
        if args.code:
            sys.path.insert(0, os.getcwd())
        print(json.dumps(measure_db(args, args.database_url)))
        return 0
    results = []
    for db in args.db:
        results.append(_child(args, db))
        if args.before:
            results.append(_child(args, db, code=args.before))
    table = [row for result in results for row in summarize(result)]
    print(render(table))
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    report = {"benchmark": "breaker_throughput", "chains": args.chains, "edits": args.steps,
              "latency_asked_s": args.latency, "summary": table, "raw": results}  # fmt: skip
    Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.output}")
    missed = [r for r in table if "before" not in r["database"]
              and (r["platform_over_ideal"] > RATIO_GOAL
                   or r["ms_per_step_instant"] > MS_PER_STEP_GOAL)]  # fmt: skip
    for r in missed:
        print(f"goal missed: {r['database']} at concurrency {r['concurrency']}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
