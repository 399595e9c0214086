"""Annotating under load: N simulated annotators doing next-item → submit against a real server.

Starts gunicorn (``bench/requirements.txt``) on a free port over a throwaway PostgreSQL database,
creates two ESA campaigns with the same number of open items, and lets 8 and then 32 simulated
annotators work through the REST API (session login, ``GET /api/campaigns/<id>/next-item/``,
``POST /api/annotations/`` with an ``Idempotency-Key``), measuring every request's latency:

* ``empty``: a campaign with no annotations yet;
* ``50k``: a campaign that already holds 50,000 submitted annotations (bulk-created, with their
  claims and item counters, as if 50 earlier annotators had done them).

The phases alternate (empty-8, 50k-8, empty-32, 50k-32), repeated in rounds whose samples are
pooled per phase, so that noise from other load on the machine hits both sides alike. Reported:
requests/s, p50/p95/p99 per phase and per endpoint, and the ratio of p95 after 50k annotations
to p95 on the empty campaign (1.0 = flat). Afterwards the 50k campaign and one with a tenth of
its annotations are exported (JSONL, streamed) in this process: the peak memory must not grow
with the campaign.

    .venv/bin/pip install -r bench/requirements.txt
    .venv/bin/python bench/annotation_load.py                        # ~8 min
    .venv/bin/python bench/annotation_load.py --seconds 5 --existing 5000 --annotators 8

Needs PostgreSQL at --pg (default postgres://postgres@127.0.0.1:5432); the database is dropped at
the end. Writes bench/results/annotation_load.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"
PASSWORD = "bench-annotator-password"


# --- database and server ---------------------------------------------------------------------


def create_database(pg: str) -> tuple[str, str]:
    name = f"hardset_bench_load_{os.getpid()}"
    with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return name, f"{pg}/{name}"


def drop_database(pg: str, name: str) -> None:
    with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def server_env(database_url: str, var_dir: str) -> dict[str, str]:
    """Production-like settings (DEBUG off: no query log) on plain HTTP at 127.0.0.1."""
    return os.environ | {
        "DATABASE_URL": database_url,
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "HARDSET_VAR_DIR": var_dir,
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(env: dict[str, str], port: int, workers: int, threads: int) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "gunicorn", "config.wsgi:application",
        "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--threads", str(threads),
        "--worker-class", "gthread", "--log-level", "warning", "--timeout", "120",
        # Longer than any pause between one client's requests: no idle-close race.
        "--keep-alive", "30",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("gunicorn exited at start-up")
        try:
            httpx.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=2)
            return process
        except httpx.TransportError:
            time.sleep(0.3)
    raise RuntimeError("gunicorn did not answer within 60 s")


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


# --- data ------------------------------------------------------------------------------------


def make_items(campaign, count: int, start: int, completed: int):
    from annotation.models import Item

    return [
        Item(
            campaign=campaign, doc_id=f"doc-{n // 10}", seg_id=str(n % 10), src_lang="en",
            tgt_lang="cs", source=f"Benchmark source sentence number {n}.",
            target=f"Srovnávací cílová věta číslo {n}.", system=f"sys-{n % 4}", position=n,
            completed_count=completed,
        )
        for n in range(start, start + count)
    ]  # fmt: skip


def shared_password_hash() -> str:
    """One PBKDF2 hash for every bench account (hashing each would take minutes)."""
    from django.contrib.auth.hashers import make_password

    return make_password(PASSWORD)


def make_annotators(prefix: str, count: int, password_hash: str):
    from django.contrib.auth import get_user_model

    from annotation.models import Annotator

    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"{prefix}-{n}", password=password_hash) for n in range(count)]
    )
    return Annotator.objects.bulk_create(
        [Annotator(user=user, pseudonym=f"{prefix}-{n}") for n, user in enumerate(users)]
    )


def build_campaign(name: str, open_items: int, existing: int, password_hash: str):
    """A campaign with ``open_items`` free items after ``existing`` already annotated ones."""
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import Annotation, Assignment, Campaign, Enrollment, Item

    campaign = Campaign.objects.create(
        name=name, protocol="esa", src_lang="en", tgt_lang="cs", overlap=1,
        qc_min_seconds_per_item=0.0,
    )  # fmt: skip
    batch = 5000
    per_filler = 1000
    fillers = make_annotators(f"{name}-filler", -(-existing // per_filler), password_hash)
    Enrollment.objects.bulk_create([Enrollment(campaign=campaign, annotator=a) for a in fillers])
    now = timezone.now()
    for start in range(0, existing, batch):
        with transaction.atomic():
            items = Item.objects.bulk_create(
                make_items(campaign, min(batch, existing - start), start, completed=1)
            )
            annotations, assignments = [], []
            for offset, item in enumerate(items):
                annotator = fillers[(start + offset) // per_filler]
                score = (start + offset) % 101
                answer = {
                    "spans": [{"start": 0, "end": 10, "severity": "minor"}],
                    "score": score,
                    "confirmed_low_score": False,
                }
                when = now - timedelta(seconds=existing - start - offset)
                annotations.append(
                    Annotation(
                        campaign=campaign,
                        item=item,
                        annotator=annotator,
                        status="submitted",
                        answer=answer,
                        draft=answer,
                        score=float(score),
                        time_spent_seconds=15.0,
                        last_activity_at=when,
                        submitted_at=when,
                        revision=1,
                    )
                )
                assignments.append(
                    Assignment(
                        campaign=campaign,
                        item=item,
                        annotator=annotator,
                        status="submitted",
                        claimed_at=when,
                        expires_at=when + timedelta(hours=1),
                    )
                )
            Annotation.objects.bulk_create(annotations)
            Assignment.objects.bulk_create(assignments)
    Item.objects.bulk_create(make_items(campaign, open_items, existing, completed=0))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # fresh planner statistics, as autovacuum would give later
    return campaign


def enroll_load_annotators(campaign, prefix: str, count: int, password_hash: str) -> list[str]:
    from annotation import services

    annotators = make_annotators(prefix, count, password_hash)
    for annotator in annotators:
        services.enroll(annotator, campaign)
    return [a.user.username for a in annotators]


# --- load ------------------------------------------------------------------------------------


@dataclass
class Samples:
    next_item: list[float] = field(default_factory=list)
    submit: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    wall: float = 0.0


def login(base: str, username: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=60)
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"]
    response = client.post(
        "/accounts/login/",
        data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{base}/accounts/login/"},
    )
    if "sessionid" not in client.cookies:
        raise RuntimeError(f"login failed for {username}: {response.status_code}")
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
    client.headers["Referer"] = f"{base}/"
    return client


def annotator_loop(
    client: httpx.Client,
    campaign_id: int,
    seconds: float,
    samples: Samples,
    start: threading.Barrier,
) -> None:
    start.wait()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if not one_item(client, campaign_id, samples):
                return
        except httpx.TransportError as exc:
            # Counted, not fatal: the next loop opens a fresh connection.
            with samples.lock:
                samples.errors.append(f"transport: {exc}")


def one_item(client: httpx.Client, campaign_id: int, samples: Samples) -> bool:
    """next-item then submit; False when the annotator has nothing left or was refused."""
    t0 = time.perf_counter()
    response = client.get(f"/api/campaigns/{campaign_id}/next-item/")
    t1 = time.perf_counter()
    if response.status_code == 204:
        return False
    if response.status_code != 200:
        with samples.lock:
            samples.errors.append(f"next-item {response.status_code}")
        return False
    item = response.json()["item"]
    answer = {"spans": [{"start": 0, "end": 10, "severity": "minor"}], "score": 70}
    t2 = time.perf_counter()
    posted = client.post(
        "/api/annotations/",
        json={"item": item["id"], "answer": answer},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    t3 = time.perf_counter()
    with samples.lock:
        samples.next_item.append(t1 - t0)
        if posted.status_code == 201:
            samples.submit.append(t3 - t2)
        else:
            samples.errors.append(f"submit {posted.status_code}: {posted.text[:200]}")
    return True


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return round(ordered[index] * 1000, 2)


def summarize(samples: Samples, wall: float) -> dict:
    every = samples.next_item + samples.submit
    return {
        "requests": len(every),
        "requests_per_s": round(len(every) / wall, 1),
        "annotations_per_s": round(len(samples.submit) / wall, 1),
        "p50_ms": percentile(every, 50),
        "p95_ms": percentile(every, 95),
        "p99_ms": percentile(every, 99),
        "next_item": {"p50_ms": percentile(samples.next_item, 50),
                      "p95_ms": percentile(samples.next_item, 95)},
        "submit": {"p50_ms": percentile(samples.submit, 50),
                   "p95_ms": percentile(samples.submit, 95)},
        "errors": len(samples.errors),
        "error_examples": samples.errors[:5],
        "wall_s": round(wall, 2),
    }  # fmt: skip


def run_phase(base: str, campaign_id: int, usernames: list[str], seconds: float) -> Samples:
    """Log everyone in first (not timed), then release all annotators at once."""
    clients = [login(base, name) for name in usernames]
    samples = Samples()
    barrier = threading.Barrier(len(clients) + 1)
    threads = [
        threading.Thread(target=annotator_loop, args=(c, campaign_id, seconds, samples, barrier))
        for c in clients
    ]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    samples.wall = time.perf_counter() - started
    for client in clients:
        client.close()
    return samples


def pooled(runs: list[Samples]) -> dict:
    """One summary over several rounds of the same phase (requests/s over their summed time)."""
    merged = Samples()
    for run in runs:
        merged.next_item += run.next_item
        merged.submit += run.submit
        merged.errors += run.errors
    return summarize(merged, sum(run.wall for run in runs))


# --- export memory ---------------------------------------------------------------------------


def export_memory(campaign) -> dict:
    """Stream the campaign's JSONL export to /dev/null: once timed, once under tracemalloc.

    The traced peak (Python allocations) is what must stay flat as the campaign grows; the time
    is taken on the untraced run because tracing slows the ORM down several times.
    """
    from annotation import exports

    def drain() -> int:
        rows = 0
        with open(os.devnull, "w", encoding="utf-8") as sink:
            for chunk in exports.stream_export(campaign, "jsonl"):
                sink.write(chunk)
                rows += 1
        return rows

    started = time.perf_counter()
    rows = drain()
    elapsed = time.perf_counter() - started
    tracemalloc.start()
    drain()
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "rows": rows,
        "seconds": round(elapsed, 2),
        "rows_per_s": round(rows / elapsed) if elapsed else None,
        "peak_traced_mb": round(peak / 2**20, 1),
    }


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--seconds", type=float, default=15.0, help="per phase and round")
    parser.add_argument(
        "--rounds", type=int, default=2, help="alternating rounds, pooled (machine noise)"
    )
    parser.add_argument("--existing", type=int, default=50_000)
    parser.add_argument("--open-items", type=int, default=6000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--output", default=str(RESULTS / "annotation_load.json"))
    args = parser.parse_args()

    var_dir = f"/tmp/hardset-bench-load-{os.getpid()}"
    Path(var_dir).mkdir(parents=True, exist_ok=True)
    db_name, database_url = create_database(args.pg)
    env = server_env(database_url, var_dir)
    os.environ.update({k: env[k] for k in (
        "DATABASE_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "HARDSET_VAR_DIR",
        "DJANGO_SETTINGS_MODULE", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "LOG_LEVEL",
    )})  # fmt: skip
    server = None
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        password_hash = shared_password_hash()
        t0 = time.perf_counter()
        empty = build_campaign("load-empty", args.open_items, 0, password_hash)
        grown = build_campaign("load-50k", args.open_items, args.existing, password_hash)
        # Export only: a tenth of the annotations, same work per annotator (1000 each), so the
        # two export peaks differ only by campaign size.
        tenth = build_campaign("export-tenth", 0, args.existing // 10, password_hash)
        build_seconds = time.perf_counter() - t0
        print(f"built campaigns ({args.existing} existing annotations) in {build_seconds:.1f} s")

        port = free_port()
        server = start_server(env, port, args.workers, args.threads)
        base = f"http://127.0.0.1:{port}"
        runs: dict[tuple[str, int], list[Samples]] = {}
        rounds = []
        for round_number in range(1, args.rounds + 1):
            for n in args.annotators:
                for label, campaign in (("empty", empty), ("50k", grown)):
                    prefix = f"{label}-{n}-r{round_number}"
                    names = enroll_load_annotators(campaign, prefix, n, password_hash)
                    samples = run_phase(base, campaign.pk, names, args.seconds)
                    runs.setdefault((label, n), []).append(samples)
                    result = summarize(samples, samples.wall)
                    rounds.append(
                        result | {"round": round_number, "campaign": label, "annotators": n}
                    )
                    print(
                        f"round {round_number}: {label:>5} campaign, {n:>2} annotators: "
                        f"{result['requests_per_s']:>6} req/s, p50 {result['p50_ms']} ms, "
                        f"p95 {result['p95_ms']} ms, errors {result['errors']}"
                    )
        stop_server(server)
        server = None

        phases = [
            pooled(runs[(label, n)]) | {"campaign": label, "annotators": n}
            for n in args.annotators
            for label in ("empty", "50k")
        ]
        for phase in phases:
            print(
                f"pooled: {phase['campaign']:>5} campaign, {phase['annotators']:>2} annotators: "
                f"{phase['requests_per_s']:>6} req/s, p50 {phase['p50_ms']} ms, "
                f"p95 {phase['p95_ms']} ms, errors {phase['errors']}"
            )
        ratios = {}
        for n in args.annotators:
            by = {p["campaign"]: p for p in phases if p["annotators"] == n}
            if by["empty"]["p95_ms"] and by["50k"]["p95_ms"]:
                ratios[str(n)] = round(by["50k"]["p95_ms"] / by["empty"]["p95_ms"], 2)
        export_small = export_memory(tenth)
        export_large = export_memory(grown)
        report = {
            "benchmark": "annotation_load",
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                        "platform": platform.platform()},
            "server": {"gunicorn_workers": args.workers, "threads": args.threads,
                       "database": "postgresql", "debug": False},
            "existing_annotations": args.existing,
            "seconds_per_phase": args.seconds,
            "rounds": args.rounds,
            "phases": phases,
            "per_round": rounds,
            "p95_ratio_50k_over_empty": ratios,
            "export_jsonl": {"tenth_campaign": export_small,
                             "50k_campaign_after_load": export_large},
            "build_seconds": round(build_seconds, 1),
        }  # fmt: skip
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
        print(f"p95 ratio (50k / empty): {ratios}")
        print(f"export: {export_small} vs {export_large}")
        print(f"wrote {args.output}")
    finally:
        if server is not None:
            stop_server(server)
        from django.db import connections

        connections.close_all()
        drop_database(args.pg, db_name)


if __name__ == "__main__":
    main()
