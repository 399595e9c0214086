"""What one next-item → submit pair costs the server, in process: no HTTP, no load generator.

One Django process drives the WSGI application directly (``DEBUG`` off, PostgreSQL, one signed-in
annotator, an overlap-1 ESA campaign of 3,000 open items) through ``--pairs`` pairs after 50
warm-up pairs, and reports per pair:

* the CPU time of the Django process and of its PostgreSQL backend (``psutil``);
* the WAL PostgreSQL wrote (``pg_current_wal_lsn``), which follows the rows and index entries
  each pair writes and does not depend on how busy the machine is.

``--history N`` first gives the database N submitted annotations of another campaign (1,000
per annotator) and fresh planner statistics, as a database in use has: on an empty one, plans that
PostgreSQL caches per connection are made for nearly empty tables.

With ``--baseline REF`` the same measurement runs on the tree of REF (``git archive``) in the
same sitting, alternating with this tree (its tracked files, extracted the same way)
``--rounds`` times; medians are reported with the
ratio of this tree to the baseline. The load test (``bench/annotation_load.py``) says what a
server does under concurrency; this one says where a change moved the cost of one pair.

    .venv/bin/python bench/annotation_pair_cost.py --baseline HEAD~1      # ~2 min
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import annotation_load as load  # noqa: E402  (the campaign and session builders)

ANSWER = {"spans": [{"start": 0, "end": 10, "severity": "minor"}], "score": 70}
WARM_UP = 50


def measure(pairs: int, history: int) -> dict[str, float]:
    """Child-process mode, run in the tree being measured: the costs of ``pairs`` pairs."""
    import django

    django.setup()
    import psutil
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    password_hash = load.shared_password_hash()
    if history:
        load.build_campaign(f"history-{uuid.uuid4().hex[:6]}", 0, history, password_hash)
    campaign = load.build_campaign(f"pair-{uuid.uuid4().hex[:6]}", 3000, 0, password_hash)
    session = load.enroll_load_annotators(campaign, "pair", 1, password_hash)[0]
    csrf = uuid.uuid4().hex
    cookie = f"{settings.SESSION_COOKIE_NAME}={session}; {settings.CSRF_COOKIE_NAME}={csrf}"
    application = WSGIHandler()

    def call(method: str, path: str, body: bytes = b"", **headers: str) -> tuple[str, bytes]:
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "",
            "SERVER_NAME": "localhost", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr,
            "CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": "application/json",
            "HTTP_HOST": "localhost", "HTTP_COOKIE": cookie, "HTTP_X_CSRFTOKEN": csrf,
            "HTTP_REFERER": "http://localhost/", **headers,
        }  # fmt: skip
        status: list[str] = []
        body_out = b"".join(application(environ, lambda s, h, *rest: status.append(s)))
        return status[0], body_out

    def pair() -> None:
        status, body = call("GET", f"/api/campaigns/{campaign.pk}/next-item/")
        if not status.startswith("200"):
            raise RuntimeError(f"next-item answered {status}: {body[:200]!r}")
        item = json.loads(body)["item"]["id"]
        answer = json.dumps({"item": item, "answer": ANSWER}).encode()
        status, body = call(
            "POST", "/api/annotations/", answer, HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex
        )
        if not status.startswith("201"):
            raise RuntimeError(f"submit answered {status}: {body[:200]!r}")

    def wal_bytes() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")
            return int(cursor.fetchone()[0])

    for _ in range(WARM_UP):
        pair()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = psutil.Process(cursor.fetchone()[0])

    def backend_cpu() -> float:
        times = backend.cpu_times()
        return times.user + times.system

    wal, server, database = wal_bytes(), time.process_time(), backend_cpu()
    for _ in range(pairs):
        pair()
    return {
        "django_cpu_ms": 1000 * (time.process_time() - server) / pairs,
        "postgresql_cpu_ms": 1000 * (backend_cpu() - database) / pairs,
        "wal_bytes": (wal_bytes() - wal) / pairs,
    }


def run_tree(code: Path, database_url: str, pairs: int, history: int) -> dict[str, float]:
    env = load.server_env(database_url, tempfile.mkdtemp(prefix="pair-cost-"))
    env |= {"PYTHONPATH": str(code)}  # (server_env turns the throttles off)
    env["BENCH_LOGIN_BACKEND"] = load.login_backend(code, env)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--pairs", str(pairs)]
    command += ["--history", str(history)]
    done = subprocess.run(command, cwd=code, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def working_tree_commit() -> str:
    """A commit of the checkout's tracked files with their uncommitted changes (``git stash
    create``, which changes nothing); ``HEAD`` when there are none. New files count once
    ``git add``-ed."""
    stash = subprocess.run(
        ["git", "stash", "create"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    return stash or "HEAD"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--history", type=int, default=0, help="annotations already in the database"
    )
    parser.add_argument("--baseline", metavar="REF", help="also measure the tree of REF")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.pairs, args.history)))
        return

    with tempfile.TemporaryDirectory(prefix="pair-cost-") as scratch:
        # This tree is measured from an extract too: run from the checkout itself, identical
        # code came out 10-15 % cheaper than its extract (an A/A run), which hid the changes
        # this benchmark is for.
        commit = load.extract_commit(working_tree_commit(), Path(scratch) / "this")
        trees = {f"this tree ({commit}+)": Path(scratch) / "this"}
        if args.baseline:
            commit = load.extract_commit(args.baseline, Path(scratch) / "baseline")
            trees[f"baseline {commit}"] = Path(scratch) / "baseline"
        results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for round_number in range(args.rounds):
            # Alternating, so that a busier minute of the machine hits both alike, and in the
            # reverse order every other round, so that neither tree always runs first (in one
            # run, whichever ran first in a round came out dearer in three rounds of four).
            order = list(trees.items())
            for name, code in order if round_number % 2 == 0 else order[::-1]:
                database, url = load.create_database(args.pg, f"pair{round_number}")
                try:
                    results[name].append(run_tree(code, url, args.pairs, args.history))
                finally:
                    load.drop_database(args.pg, database)
                print(f"round {round_number + 1}, {name}: {results[name][-1]}", flush=True)
    report(results)


def report(results: dict[str, list[dict[str, float]]]) -> None:
    medians = {
        name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        for name, runs in results.items()
    }
    print("\n| tree | Django CPU ms / pair | PostgreSQL CPU ms / pair | WAL bytes / pair |")
    print("| --- | ---: | ---: | ---: |")
    for name, median in medians.items():
        print(
            f"| {name} | {median['django_cpu_ms']:.2f} | {median['postgresql_cpu_ms']:.2f} "
            f"| {median['wal_bytes']:.0f} |"
        )
    names = list(medians)
    if len(names) == 2:
        new, base = medians[names[0]], medians[names[1]]
        ratios = {key: round(new[key] / base[key], 3) for key in new}
        print(f"\nthis tree / baseline (medians of {len(results[names[0]])} rounds): {ratios}")


if __name__ == "__main__":
    main()
