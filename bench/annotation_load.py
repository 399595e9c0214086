"""Annotating under load: N simulated annotators doing next-item → submit against real servers.

A closed loop (each simulated annotator sends its next request when the previous one answered)
of ``next-item`` → ``submit`` at 8 and then 32 annotators, on two kinds of campaign with
``--open-items`` open items per phase (overlap 1):

* ``empty``: a campaign with no annotations yet, a fresh one for every phase;
* ``50k``: a campaign that already holds 50,000 submitted annotations (bulk-created, with their
  claims and item counters, as if 50 earlier annotators had done them), shared by its phases
  and given open items enough for all of them.

Each target first gets ``--warm-up`` unmeasured seconds on each kind of campaign (round 0:
campaigns of their own, the 50k one among them, so that no measured phase is the first to read
a 50k campaign's tables).

Targets, each on its own data, all in the same run so that load from other jobs on the machine
hits them alike (phases rotate target by target inside each round; odd rounds run the phases
from 8 annotators and the empty campaign up, even rounds the other way; rounds are pooled):

* ``hardset/postgresql`` and ``hardset/sqlite``: this working tree under gunicorn with
  ``config/gunicorn.py`` (4 workers × 2 gthreads, keep-alive 30 s; ``DEBUG`` off) through the
  REST API (signed-in sessions made beforehand;
  ``GET /api/campaigns/<id>/next-item/``, ``POST /api/annotations/`` with an
  ``Idempotency-Key``);
* ``baseline/postgresql`` (``--baseline REF``): the same server at another commit (e.g. the one
  before a change), extracted with ``git archive``, over a database prepared by this tree;
* ``pearmut``: Pearmut 1.1.6 (``pip install pearmut==1.1.6`` into its own Python ≥ 3.12
  virtual environment under ``var/``), as ``pearmut run`` serves it (one uvicorn process), with a
  ``single-stream`` ESA campaign (every user draws from one shared pool, as a Hardset campaign
  with overlap 1): ``POST /get-next-item`` → ``POST /log-response``. Its ``50k`` campaign has
  50,000 responses in its log and marked done in its progress file.

The simulated annotators are threads of this process, each with its own connection
(``http.client``: the load generator shares the cores with the servers). Reported per target
and phase: requests/s, annotations/s, p50/p95/p99 of both endpoints together and of each, the
CPU per request of the target's web server, of PostgreSQL (the whole cluster, for targets on
it) and of the load generator itself, errors; ratios of Hardset to Pearmut and to the baseline.
Afterwards the Hardset 50k campaign and one with a tenth of its annotations are exported (JSONL,
streamed) in a child process: the peak memory must not grow with the campaign.

    .venv/bin/pip install -r bench/requirements.txt
    .venv/bin/python bench/annotation_load.py --baseline main       # ~12 min
    .venv/bin/python bench/annotation_load.py --seconds 5 --existing 5000 --targets postgresql

Needs PostgreSQL at --pg (default postgres://postgres@127.0.0.1:5432); its databases are dropped
at the end. Servers listen on 127.0.0.1, ports 8180–8199. Writes
bench/results/annotation_load.json.
"""

from __future__ import annotations

import argparse
import glob
import http.client
import json
import os
import platform
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
import tracemalloc
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psutil
import psycopg

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"
PASSWORD = "bench-annotator-password"
PEARMUT = "pearmut==1.1.6"
PORTS = range(8180, 8200)
LABELS = ("empty", "50k")
# Unmeasured phases before the first round, one on each kind of campaign: a server's first
# seconds (imports, connections, caches) would otherwise count against whichever phase is first,
# and the first phase on a campaign of 50,000 annotations would read its tables from disk (in
# one run, the first 50k phase with 8 annotators answered 187 requests/s, the later ones 249-260).
WARM_UP_ROUND = 0


# --- databases and servers ---------------------------------------------------------------------


def create_database(pg: str, suffix: str) -> tuple[str, str]:
    name = f"hardset_bench_load_{os.getpid()}_{suffix}"
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
        # The simulated annotators are machines: one alone on a worker can pass 1,200 requests a
        # minute, the default limit per annotator.
        "API_THROTTLE_USER": "100000000/minute",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }


def free_port() -> int:
    for port in PORTS:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def wait_until_up(process: subprocess.Popen, url: str, what: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited at start-up")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.3)
    raise RuntimeError(f"{what} did not answer within 90 s")


def start_hardset(
    code: Path, env: dict[str, str], port: int, args, extra: Sequence[str]
) -> subprocess.Popen:
    """gunicorn with this tree's ``config/gunicorn.py`` (a baseline too, so that only the code
    differs), then the ``extra`` options (``--baseline-gunicorn``)."""
    command = [
        sys.executable, "-m", "gunicorn", "config.wsgi:application",
        "--config", str(ROOT / "config" / "gunicorn.py"),
        "--bind", f"127.0.0.1:{port}", "--log-level", "warning",
    ]  # fmt: skip
    if args.workers:
        command += ["--workers", str(args.workers)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    command += list(extra)
    process = subprocess.Popen(command, cwd=code, env=env, start_new_session=True)
    wait_until_up(process, f"http://127.0.0.1:{port}/accounts/login/", "gunicorn")
    return process


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def extract_commit(ref: str, into: Path) -> str:
    """The tree of ``ref`` in ``into`` (no checkout, no effect on the working tree)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", ref], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=ROOT, check=True, capture_output=True
    ).stdout
    tar_path = into.parent / f"{commit}.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    tar_path.unlink()
    return commit


# --- data ------------------------------------------------------------------------------------


def make_items(campaign, count: int, start: int, completed: int):
    from annotation.models import Item

    return [
        Item(
            campaign=campaign, doc_id=f"doc-{n // 10}", seg_id=str(n % 10), src_lang="en",
            tgt_lang="cs", source=f"Benchmark source sentence number {n}.",
            target=f"Srovnávací cílová věta číslo {n}.", system=f"sys-{n % 4}", position=n,
            completed_count=completed, live_slots=completed,
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
    """Enroll ``count`` new annotators; their signed-in session keys.

    Sessions are made here as a login would make them, so that the load phases do not spend
    most of their set-up time on PBKDF2 (the login page itself is not what is measured).
    """
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    from annotation.services.enrollment import enroll

    store_class = import_module(settings.SESSION_ENGINE).SessionStore
    sessions = []
    for annotator in make_annotators(prefix, count, password_hash):
        enroll(annotator, campaign)
        store = store_class()
        store[SESSION_KEY] = str(annotator.user.pk)
        store[BACKEND_SESSION_KEY] = os.environ["BENCH_LOGIN_BACKEND"]
        store[HASH_SESSION_KEY] = annotator.user.get_session_auth_hash()
        store.create()
        sessions.append(store.session_key)
    _copy_to_djangos_table(store_class.get_model_class(), sessions)
    return sessions


def _copy_to_djangos_table(model, keys: list[str]) -> None:
    """Sessions made in another table than Django's ``django_session`` (``accounts_session``
    since ADR 0042) are written there too, so that a ``--baseline`` from before reads them."""
    from django.contrib.sessions.models import Session

    if model is Session:
        return
    made = model.objects.filter(session_key__in=keys)
    Session.objects.bulk_create(
        Session(session_key=s.session_key, session_data=s.session_data, expire_date=s.expire_date)
        for s in made
    )


def phase_key(label: str, annotators: int, round_number: int) -> str:
    return f"{label}-{annotators}-r{round_number}"


def planned_phases(args) -> list[tuple[str, str, int]]:
    """(key, campaign label, annotators) of every phase: the measured ones, then the warm-up
    round's (round 0, the most annotators)."""
    phases = [
        (phase_key(label, n, round_number), label, n)
        for round_number in range(1, args.rounds + 1)
        for n in args.annotators
        for label in LABELS
    ]
    if args.warm_up:
        most = max(args.annotators)
        phases += [(phase_key(label, most, WARM_UP_ROUND), label, most) for label in LABELS]
    return phases


def prepare_hardset(args) -> None:
    """Child-process mode: migrate the database named by DATABASE_URL, build the campaigns and
    enroll every phase's annotators; print the plan as JSON."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    password_hash = shared_password_hash()
    started = time.perf_counter()
    # Every phase on the empty campaign gets a fresh one (so it is empty when the phase starts,
    # as Pearmut's are); the 50k one is shared, with open items enough for all its phases.
    phases = planned_phases(args)
    shared_items = args.open_items * sum(label == "50k" for _key, label, _n in phases)
    campaigns = {"50k": build_campaign("load-50k", shared_items, args.existing, password_hash)}
    phase_campaigns, users = {}, {}
    for key, label, n in phases:
        campaign = campaigns.get(label) or build_campaign(
            f"load-{key}", args.open_items, 0, password_hash
        )
        phase_campaigns[key] = campaign.pk
        users[key] = enroll_load_annotators(campaign, key, n, password_hash)
    if args.export_campaign:
        # Export only: a tenth of the annotations, same work per annotator (1000 each), so the
        # two export peaks differ only by campaign size.
        campaigns["export-tenth"] = build_campaign(
            "export-tenth", 0, args.existing // 10, password_hash
        )
    from django.conf import settings

    plan = {
        "campaigns": {label: campaign.pk for label, campaign in campaigns.items()},
        "phase_campaigns": phase_campaigns,
        "cookies": {"session": settings.SESSION_COOKIE_NAME, "csrf": settings.CSRF_COOKIE_NAME},
        "users": users,
        "build_seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(plan))


def run_prepare(env: dict[str, str], args) -> dict:
    command = [
        sys.executable, str(Path(__file__).resolve()), "--prepare",
        "--existing", str(args.existing), "--open-items", str(args.open_items),
        "--rounds", str(args.rounds), "--annotators", *map(str, args.annotators),
        "--warm-up", str(args.warm_up),
    ]  # fmt: skip
    if args.export_campaign:
        command.append("--export-campaign")
    done = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_export_check(env: dict[str, str], campaigns: dict[str, int]) -> dict:
    command = [
        sys.executable, str(Path(__file__).resolve()), "--export-check",
        str(campaigns["export-tenth"]), str(campaigns["50k"]),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def export_check(small_id: int, large_id: int) -> None:
    """Child-process mode: the export memory of two campaigns, printed as JSON."""
    import django

    django.setup()
    from annotation.models import Campaign

    small, large = Campaign.objects.get(pk=small_id), Campaign.objects.get(pk=large_id)
    print(json.dumps({"tenth_campaign": export_memory(small), "50k_campaign_after_load":
                      export_memory(large)}))  # fmt: skip


# --- Pearmut ---------------------------------------------------------------------------------


def python_312_or_later() -> str | None:
    """A Python ≥ 3.12 on this machine (Pearmut needs one), or None."""
    candidates = [shutil.which(f"python3.{minor}") for minor in range(12, 20)]
    candidates += sorted(glob.glob("/root/.pyenv/versions/3.1[2-9]*/bin/python"))
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python")))
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"],
            capture_output=True, text=True,
        )  # fmt: skip
        if probe.stdout.strip() == "True":
            return candidate
    return None


def pearmut_venv() -> Path:
    """Pearmut in its own virtual environment (kept under var/ for the next run)."""
    venv = ROOT / "var" / f"bench-{PEARMUT.replace('==', '-')}"
    pearmut = venv / "bin" / "pearmut"
    if pearmut.exists():
        return venv
    python = python_312_or_later()
    if python is None:
        raise RuntimeError("Pearmut needs Python >= 3.12 and none was found")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", PEARMUT], check=True, timeout=900
    )
    return venv


def pearmut_document(n: int) -> list[dict]:
    return [{
        "src": f"Benchmark source sentence number {n}.",
        "tgt": {"sys": f"Srovnávací cílová věta číslo {n}."},
        "item_id": f"seg-{n}",
    }]  # fmt: skip


def pearmut_campaign(
    venv: Path, root: Path, name: str, existing: int, open_items: int, users: list[str]
) -> None:
    """A single-stream ESA campaign; for ``existing`` > 0, that many responses are in its log
    and marked done in every user's progress, as if earlier annotators had submitted them."""
    spec = {
        "campaign_id": f"load-{name}",
        "info": {"assignment": "single-stream", "protocol": "ESA", "users": users,
                 "shuffle": False, "seed": 1},
        "data": [pearmut_document(n) for n in range(existing + open_items)],
    }  # fmt: skip
    path = root / f"load-{name}.json"
    path.write_text(json.dumps(spec))
    subprocess.run(
        [str(venv / "bin" / "pearmut"), "add", str(path)],
        cwd=root, env=os.environ | {"PEARMUT_ROOT": str(root)}, check=True, capture_output=True,
    )  # fmt: skip
    if not existing:
        return
    progress_path = root / "data" / "progress" / f"load-{name}.json"
    progress = json.loads(progress_path.read_text())
    for user in progress.values():
        user["progress"][:existing] = ["completed_foreign"] * existing
    progress_path.write_text(json.dumps(progress))
    log = root / "data" / "annotations" / f"load-{name}.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        for n in range(existing):
            entry = {"annotation": [pearmut_answer(n % 101)], "user_id": f"filler-{n // 1000}",
                     "item_i": n}  # fmt: skip
            out.write(json.dumps(entry) + "\n")


def pearmut_answer(score: int) -> dict:
    return {"score": score, "error_spans": [{"start_i": 0, "end_i": 10, "severity": "minor"}]}


def start_pearmut(venv: Path, root: Path, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [str(venv / "bin" / "pearmut"), "run", "--port", str(port)],
        cwd=root, env=os.environ | {"PEARMUT_ROOT": str(root)}, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_until_up(process, f"http://127.0.0.1:{port}/annotate", "pearmut")
    return process


# --- load ------------------------------------------------------------------------------------


@dataclass
class Samples:
    next_item: list[float] = field(default_factory=list)
    submit: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # (item id, annotation id) of each submit the server acknowledged (Hardset targets).
    stored: list[tuple[int, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    wall: float = 0.0
    # CPU time the load generator itself spent (this process): it shares the machine's cores.
    client_cpu: float = 0.0
    # CPU time of the target's web server processes and of the PostgreSQL cluster (None: the
    # target is not on PostgreSQL), during the phase.
    server_cpu: float = 0.0
    database_cpu: float | None = None
    # CPU time the hypervisor gave other guests while this one wanted it (all cores, from
    # /proc/stat): the machine's own noise. A phase with more of it is slower for no fault of
    # its target's (bench/README, "Pearmut on an ordinary day, six rounds, and the machine's
    # steal").
    steal: float = 0.0
    # PostgreSQL's own work during the phase, for targets on it: autovacuum and autoanalyze runs
    # on the target's tables, and checkpoints of the cluster. Either lands in whichever phase it
    # happens to, and costs that phase CPU its requests did not ask for.
    autovacuums: int | None = None
    checkpoints: int | None = None
    # The simulated annotators' connections held by each of the server's processes halfway
    # through the phase, most first: a gthread worker serves the connections it accepted, so
    # when one process holds them all, its GIL holds the server to about one core of Python
    # (bench/README, "A quiet day with 4 × 2").
    spread: list[int] | None = None

    def record(self, next_item: float, submit: float | None, error: str = "") -> None:
        with self.lock:
            self.next_item.append(next_item)
            if submit is not None:
                self.submit.append(submit)
            if error:
                self.errors.append(error)

    def acknowledged(self, item_id: int, annotation_id: int) -> None:
        with self.lock:
            self.stored.append((item_id, annotation_id))

    def error(self, message: str) -> None:
        with self.lock:
            self.errors.append(message)


TRANSPORT_ERRORS = (OSError, http.client.HTTPException)


class Client:
    """One simulated annotator's keep-alive connection, on the standard library's http.client.

    The load generator shares the machine's cores with the servers it measures, so it should cost
    as little CPU as it can: http.client needs about a third of httpx's per request (bench/README,
    "The server's settings and a load test that measures the server"). Headers given here go
    with every request."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        address = urlsplit(base)
        self.headers = headers or {}
        self.connection = http.client.HTTPConnection(
            address.hostname or "127.0.0.1", address.port or 80, timeout=60
        )

    def request(
        self, method: str, path: str, body: object = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        sent = self.headers | (headers or {})
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            sent = sent | {"Content-Type": "application/json"}
        try:
            self.connection.request(method, path, payload, sent)
            response = self.connection.getresponse()
            return response.status, response.read()
        except TRANSPORT_ERRORS:
            # The next request opens a fresh connection (the caller counts the error).
            self.connection.close()
            raise

    def close(self) -> None:
        self.connection.close()


def signed_in(base: str, session_key: str, cookie_names: dict[str, str]) -> Client:
    """A client holding the annotator's session and a CSRF secret of its own (sent back as
    the header, as the page's JavaScript does)."""
    csrf = secrets.token_hex(16)  # 32 characters: Django compares an unmasked secret as is
    cookie = f"{cookie_names['session']}={session_key}; {cookie_names['csrf']}={csrf}"
    return Client(base, {"Cookie": cookie, "X-CSRFToken": csrf, "Referer": f"{base}/"})


Step = Callable[[Client, Samples], bool]
"""One next-item → submit of one annotator; False when it has nothing left or was refused."""


def hardset_step(campaign_id: int) -> Step:
    def step(client: Client, samples: Samples) -> bool:
        t0 = time.perf_counter()
        status, body = client.request("GET", f"/api/campaigns/{campaign_id}/next-item/")
        t1 = time.perf_counter()
        if status == 204:
            # Only when the campaign ran out: the phase would end early, so it is an error.
            samples.error("next-item 204: no open item left (raise --open-items)")
            return False
        if status != 200:
            samples.error(f"next-item {status}")
            return False
        item = json.loads(body)["item"]
        answer = {"spans": [{"start": 0, "end": 10, "severity": "minor"}], "score": 70}
        t2 = time.perf_counter()
        status, body = client.request(
            "POST",
            "/api/annotations/",
            {"item": item["id"], "answer": answer},
            {"Idempotency-Key": uuid.uuid4().hex},
        )
        t3 = time.perf_counter()
        if status == 201:
            samples.record(t1 - t0, t3 - t2)
            samples.acknowledged(item["id"], json.loads(body)["id"])
        else:
            samples.record(t1 - t0, None, f"submit {status}: {body[:200]!r}")
        return True

    return step


def pearmut_step(campaign: str, user_id: str) -> Step:
    def step(client: Client, samples: Samples) -> bool:
        who = {"campaign_id": campaign, "user_id": user_id}
        t0 = time.perf_counter()
        status, body = client.request("POST", "/get-next-item", who)
        t1 = time.perf_counter()
        if status != 200:
            samples.error(f"get-next-item {status}: {body[:200]!r}")
            return False
        answer = json.loads(body)
        if answer.get("status") != "ok":
            samples.error(f"get-next-item status {answer.get('status')!r} (raise --open-items)")
            return False
        started = time.time()
        payload = {
            "annotation": [pearmut_answer(70)],
            "actions": [{"time": started, "action": "load"}, {"time": started, "action": "submit"}],
        }
        t2 = time.perf_counter()
        status, body = client.request(
            "POST", "/log-response", who | {"item_i": answer["info"]["item_i"], "payload": payload}
        )
        t3 = time.perf_counter()
        if status == 200:
            samples.record(t1 - t0, t3 - t2)
        else:
            samples.record(t1 - t0, None, f"log-response {status}: {body[:200]!r}")
        return True

    return step


def annotator_loop(
    client: Client, step: Step, seconds: float, samples: Samples, start: threading.Barrier
) -> None:
    start.wait()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if not step(client, samples):
                return
        except TRANSPORT_ERRORS as exc:
            # Counted, not fatal: the next loop opens a fresh connection.
            samples.error(f"transport: {exc}")


def _cpu_seconds(processes, roots) -> float:
    """The CPU time the processes have spent, plus what the children that the ``roots`` have
    reaped spent: a gunicorn worker that restarted, a PostgreSQL backend that ended because
    Django closed a connection older than ``CONN_MAX_AGE`` in the middle of a phase. Between
    two readings, a process that ended moves its time from the first term to the second."""
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.Error:  # it ended meanwhile
            continue
        total += times.user + times.system
        if process in roots:
            total += times.children_user + times.children_system
    return total


def _postgres_cpu() -> float:
    """Every PostgreSQL process on the machine (backends, WAL writer, autovacuum ...)."""
    postgres = [p for p in psutil.process_iter(["name", "ppid"]) if p.info["name"] == "postgres"]
    pids = {p.pid for p in postgres}
    postmasters = [p for p in postgres if p.info["ppid"] not in pids]
    return _cpu_seconds(postgres, postmasters)


@dataclass
class CpuMeter:
    """The CPU that one target spends: its web server (the process and its children, e.g.
    gunicorn's workers) and, for a target on PostgreSQL, the whole PostgreSQL cluster (only one
    target is under load at a time). Whether a request costs more CPU at 32 annotators than at
    8 is what tells overhead that grows with concurrency from a machine that is simply full."""

    server: subprocess.Popen
    database_url: str | None = None
    port: int | None = None

    def read(self) -> tuple[float, float | None]:
        root = psutil.Process(self.server.pid)
        server = _cpu_seconds([root, *root.children(recursive=True)], [root])
        return server, _postgres_cpu() if self.database_url else None

    def record(self, samples: Samples, before: tuple[float, float | None]) -> None:
        server, database = self.read()
        samples.server_cpu = server - before[0]
        if database is not None and before[1] is not None:
            samples.database_cpu = database - before[1]

    def spread(self) -> list[int] | None:
        """Connections to the server's port per process that serves them (gunicorn's workers;
        Pearmut's one process), most first."""
        if self.port is None:
            return None
        root = psutil.Process(self.server.pid)
        counts = []
        for process in [root, *root.children(recursive=True)]:
            try:
                connections = process.net_connections(kind="tcp")
            except psutil.Error:  # it ended meanwhile
                continue
            held = sum(1 for c in connections if c.status == psutil.CONN_ESTABLISHED
                       and c.laddr and c.laddr.port == self.port)  # fmt: skip
            if held or process is not root:
                counts.append(held)
        return sorted(counts, reverse=True)

    def background_work(self) -> tuple[int, int] | None:
        """Read outside the CPU window: the query costs PostgreSQL a connection."""
        return postgres_background_work(self.database_url) if self.database_url else None

    def record_background_work(self, samples: Samples, before: tuple[int, int] | None) -> None:
        after = self.background_work()
        if before and after:
            samples.autovacuums = after[0] - before[0]
            samples.checkpoints = after[1] - before[1]


def postgres_background_work(database_url: str) -> tuple[int, int]:
    """Autovacuum and autoanalyze runs on the database's tables so far, and the cluster's
    checkpoints (``pg_stat_checkpointer`` from PostgreSQL 17, ``pg_stat_bgwriter`` before)."""
    with psycopg.connect(database_url, autocommit=True) as conn:

        def number(sql: str) -> int:
            row = conn.execute(sql).fetchone()
            return int(row[0]) if row else 0

        vacuums = number(
            "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_user_tables"
        )
        try:
            checkpoints = number("SELECT num_timed + num_requested FROM pg_stat_checkpointer")
        except psycopg.errors.UndefinedTable:
            checkpoints = number("SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter")
    return vacuums, checkpoints


def run_phase(
    clients: list[tuple[Client, Step]], seconds: float, meter: CpuMeter | None = None
) -> Samples:
    """Release all annotators at once (they are logged in already, not timed)."""
    samples = Samples()
    barrier = threading.Barrier(len(clients) + 1)
    threads = [
        threading.Thread(target=annotator_loop, args=(client, step, seconds, samples, barrier))
        for client, step in clients
    ]
    for thread in threads:
        thread.start()
    background = meter.background_work() if meter else None
    before = meter.read() if meter else None
    barrier.wait()
    started, cpu, steal = time.perf_counter(), time.process_time(), _steal_seconds()
    if meter:
        time.sleep(seconds / 2)
        samples.spread = meter.spread()
    for thread in threads:
        thread.join()
    samples.wall = time.perf_counter() - started
    samples.client_cpu = time.process_time() - cpu
    samples.steal = _steal_seconds() - steal
    if meter and before:
        meter.record(samples, before)
        meter.record_background_work(samples, background)
    for client, _step in clients:
        client.close()
    return samples


def _steal_seconds() -> float:
    return getattr(psutil.cpu_times(), "steal", 0.0)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return round(ordered[index] * 1000, 2)


def per_request(cpu_seconds: float | None, requests: list[float]) -> float | None:
    if cpu_seconds is None or not requests:
        return None
    return round(1000 * cpu_seconds / len(requests), 3)


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
        "client_cpu_ms_per_request": per_request(samples.client_cpu, every),
        "server_cpu_ms_per_request": per_request(samples.server_cpu, every),
        "database_cpu_ms_per_request": per_request(samples.database_cpu, every),
        "errors": len(samples.errors),
        "error_examples": samples.errors[:5],
        "steal_percent": round(100 * samples.steal / (wall * (os.cpu_count() or 1)), 1),
        "wall_s": round(wall, 2),
        "autovacuums": samples.autovacuums,
        "checkpoints": samples.checkpoints,
        "connections_per_process": samples.spread,
    }  # fmt: skip


def pooled(runs: list[Samples]) -> dict:
    """One summary over several rounds of the same phase (requests/s over their summed time)."""
    merged = Samples()
    for run in runs:
        merged.next_item += run.next_item
        merged.submit += run.submit
        merged.errors += run.errors
        merged.client_cpu += run.client_cpu
        merged.server_cpu += run.server_cpu
        merged.steal += run.steal
        if run.database_cpu is not None:
            merged.database_cpu = (merged.database_cpu or 0.0) + run.database_cpu
        if run.autovacuums is not None and run.checkpoints is not None:
            merged.autovacuums = (merged.autovacuums or 0) + run.autovacuums
            merged.checkpoints = (merged.checkpoints or 0) + run.checkpoints
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


# --- targets ---------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    launch: Callable[[int], subprocess.Popen]
    clients: Callable[[str, str, int, int], list[tuple[Client, Step]]]
    """(base URL, campaign label, annotators, round) -> logged-in clients with their step."""
    setup: dict = field(default_factory=dict)
    database_url: str | None = None
    """For a target on PostgreSQL: its database, whose cluster's CPU counts as the target's."""
    process: subprocess.Popen | None = None
    base: str = ""

    def start(self) -> None:
        """On the first free port, chosen now: the servers started before hold theirs."""
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.process = self.launch(port)

    def phase_clients(self, label: str, n: int, round_number: int):
        return self.clients(self.base, label, n, round_number)

    def meter(self) -> CpuMeter:
        assert self.process is not None, "start() first"
        return CpuMeter(self.process, self.database_url, urlsplit(self.base).port)


def login_backend(code: Path, env: dict[str, str]) -> str:
    """The password backend that the server at ``code`` records in a session at login (the
    last of its AUTHENTICATION_BACKENDS): sessions made for it must name that one."""
    command = [
        sys.executable, "-c",
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.AUTHENTICATION_BACKENDS[-1])",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=code, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1]


def hardset_target(
    name: str, code: Path, database_url: str, var_dir: Path, args, extra: Sequence[str] = ()
) -> Target:
    var_dir.mkdir(parents=True, exist_ok=True)
    env = server_env(database_url, str(var_dir))
    plan = run_prepare(env | {"BENCH_LOGIN_BACKEND": login_backend(code, env)}, args)
    print(f"{name}: campaigns built in {plan['build_seconds']} s", flush=True)

    def clients(base: str, label: str, n: int, round_number: int):
        key = phase_key(label, n, round_number)
        step = hardset_step(plan["phase_campaigns"][key])
        sessions = plan["users"][key]
        return [(signed_in(base, session, plan["cookies"]), step) for session in sessions]

    return Target(
        name,
        lambda port: start_hardset(code, env, port, args, extra),
        clients,
        {
            "env": env,
            "campaigns": plan["campaigns"],
            "phase_campaigns": plan["phase_campaigns"],
            "build_seconds": plan["build_seconds"],
        },
        database_url=database_url if urlsplit(database_url).scheme.startswith("postgres") else None,
    )


def pearmut_target(var_dir: Path, args) -> Target:
    venv = pearmut_venv()
    root = var_dir / "pearmut"
    for folder in ("progress", "campaigns", "annotations", "outputs"):
        (root / "data" / folder).mkdir(parents=True, exist_ok=True)
    # A campaign per phase: Pearmut's work grows with its log, which a phase at a few hundred
    # annotations per second would fill for the next one.
    started = time.perf_counter()
    for key, label, n in planned_phases(args):
        existing = args.existing if label == "50k" else 0
        users = [f"{key}-user-{i}" for i in range(n)]
        pearmut_campaign(venv, root, key, existing, args.open_items, users)
    print(f"pearmut: campaigns built in {time.perf_counter() - started:.1f} s", flush=True)

    def clients(base: str, label: str, n: int, round_number: int):
        key = phase_key(label, n, round_number)
        return [
            (
                Client(base),
                pearmut_step(f"load-{key}", f"{key}-user-{i}"),
            )
            for i in range(n)
        ]

    return Target("pearmut", lambda port: start_pearmut(venv, root, port), clients,
                  {"version": PEARMUT, "python": python_312_or_later()})  # fmt: skip


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def comparisons(phases: list[dict], args) -> list[dict]:
    """Hardset on PostgreSQL against every other target, phase by phase."""
    by = {(p["target"], p["campaign"], p["annotators"]): p for p in phases}
    rows = []
    for n in args.annotators:
        for label in LABELS:
            ours = by.get(("hardset/postgresql", label, n))
            for other in ("baseline/postgresql", "hardset/sqlite", "pearmut"):
                theirs = by.get((other, label, n))
                if ours and theirs:
                    rows.append({
                        "campaign": label, "annotators": n, "against": other,
                        "requests_per_s_ratio": ratio(ours["requests_per_s"],
                                                      theirs["requests_per_s"]),
                        "p95_ratio": ratio(ours["p95_ms"], theirs["p95_ms"]),
                    })  # fmt: skip
    return rows


def scaling(phases: list[dict], rounds: list[dict], args) -> list[dict]:
    """Each target's requests/s at the most annotators against the fewest, per campaign: over
    the pooled rounds, and round by round (the two phases of a round ran minutes apart at most,
    so their ratio shows how far the machine's drift alone moves it)."""
    few, many = min(args.annotators), max(args.annotators)
    if few == many:
        return []
    pooled_rate = {
        (p["target"], p["campaign"], p["annotators"]): p["requests_per_s"] for p in phases
    }
    round_rate = {
        (r["target"], r["campaign"], r["annotators"], r["round"]): r["requests_per_s"]
        for r in rounds
    }
    return [
        {
            "target": target, "campaign": label, "annotators": [few, many],
            "requests_per_s_ratio": ratio(pooled_rate.get((target, label, many)),
                                          pooled_rate.get((target, label, few))),
            "per_round": [ratio(round_rate.get((target, label, many, k)),
                                round_rate.get((target, label, few, k)))
                          for k in range(1, args.rounds + 1)],
        }
        for target in dict.fromkeys(p["target"] for p in phases)
        for label in LABELS
    ]  # fmt: skip


def markdown(phases: list[dict]) -> str:
    lines = [
        "| target | campaign | annotators | req/s | annotations/s | p50 ms | p95 ms "
        "| next-item p50 / p95 | submit p50 / p95 | CPU ms/req: server / database / client "
        "| steal % | errors |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for p in phases:
        lines.append(
            f"| {p['target']} | {p['campaign']} | {p['annotators']} | {p['requests_per_s']} "
            f"| {p['annotations_per_s']} | {p['p50_ms']} | {p['p95_ms']} "
            f"| {p['next_item']['p50_ms']} / {p['next_item']['p95_ms']} "
            f"| {p['submit']['p50_ms']} / {p['submit']['p95_ms']} "
            f"| {p['server_cpu_ms_per_request']} / {p['database_cpu_ms_per_request'] or '–'} "
            f"/ {p['client_cpu_ms_per_request']} | {p['steal_percent']} | {p['errors']} |"
        )
    return "\n".join(lines)


# --- main ------------------------------------------------------------------------------------


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--seconds", type=float, default=10.0, help="per phase and round")
    parser.add_argument(
        "--rounds", type=int, default=2, help="rotating rounds, pooled (machine noise)"
    )
    parser.add_argument("--existing", type=int, default=50_000)
    parser.add_argument("--open-items", type=int, default=6000, help="per phase")
    parser.add_argument(
        "--warm-up",
        type=float,
        default=5.0,
        help="unmeasured seconds per target and kind of campaign first (0: none)",
    )
    parser.add_argument("--workers", type=int, help="default: config/gunicorn.py's")
    parser.add_argument("--threads", type=int, help="default: config/gunicorn.py's")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument(
        "--targets", nargs="+", default=["postgresql", "sqlite", "pearmut"],
        choices=["postgresql", "sqlite", "pearmut"],
    )  # fmt: skip
    parser.add_argument("--baseline", metavar="REF", help="also run Hardset at this commit (PG)")
    parser.add_argument(
        "--baseline-gunicorn", default="", metavar="OPTIONS",
        help="gunicorn options for the baseline only, e.g. '--keep-alive 30'",
    )  # fmt: skip
    parser.add_argument("--output", default=str(RESULTS / "annotation_load.json"))
    # Child-process modes (one Django database per process).
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--export-campaign", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--export-check", type=int, nargs=2, help=argparse.SUPPRESS)
    return parser.parse_args()


def build_targets(args, var_dir: Path, databases: list[str]) -> tuple[list[Target], dict]:
    targets: list[Target] = []
    skipped: dict[str, str] = {}
    if "postgresql" in args.targets:
        name, url = create_database(args.pg, "new")
        databases.append(name)
        args.export_campaign = True
        targets.append(hardset_target("hardset/postgresql", ROOT, url, var_dir / "pg", args))
        args.export_campaign = False
    if args.baseline:
        code = var_dir / "baseline-code"
        commit = extract_commit(args.baseline, code)
        name, url = create_database(args.pg, "baseline")
        databases.append(name)
        extra = shlex.split(args.baseline_gunicorn)
        target = hardset_target("baseline/postgresql", code, url, var_dir / "baseline", args, extra)
        target.setup |= {"commit": commit, "gunicorn_options": extra}
        targets.append(target)
    if "sqlite" in args.targets:
        url = f"sqlite:///{var_dir / 'sqlite' / 'hardset.sqlite3'}"
        targets.append(hardset_target("hardset/sqlite", ROOT, url, var_dir / "sqlite", args))
    if "pearmut" in args.targets:
        try:
            targets.append(pearmut_target(var_dir, args))
        except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
            skipped["pearmut"] = f"{type(exc).__name__}: {exc}"
            print(f"pearmut skipped: {skipped['pearmut']}", flush=True)
    return targets, skipped


def phase_order(annotators: Sequence[int], round_number: int) -> list[tuple[int, str]]:
    """The phases of a round: (annotators, campaign) from the fewest annotators and the empty
    campaign up in odd rounds, the other way round in even ones. A phase that always came last
    was always the one after the most load on that campaign and that server: the 50k phase with
    32 annotators was 2-12 % below the one with 8 when it did, 2-6 % with the order reversed."""
    phases = [(n, label) for n in annotators for label in LABELS]
    return phases if round_number % 2 else phases[::-1]


def load(targets: list[Target], args) -> tuple[list[dict], list[dict]]:
    runs: dict[tuple[str, str, int], list[Samples]] = {}
    rounds = []
    if args.warm_up:
        for target in targets:
            for label in LABELS:
                clients = target.phase_clients(label, max(args.annotators), WARM_UP_ROUND)
                warm = summarize(run_phase(clients, args.warm_up), args.warm_up)
                print(
                    f"warm-up: {target.name:>19} {label:>5}: {warm['requests_per_s']:>6} req/s",
                    flush=True,
                )
    for round_number in range(1, args.rounds + 1):
        for n, label in phase_order(args.annotators, round_number):
            # Each round starts with another target: none is always the first one served.
            shift = (round_number - 1) % len(targets)
            for target in targets[shift:] + targets[:shift]:
                clients = target.phase_clients(label, n, round_number)
                samples = run_phase(clients, args.seconds, target.meter())
                runs.setdefault((target.name, label, n), []).append(samples)
                result = summarize(samples, samples.wall)
                rounds.append(result | {"round": round_number, "target": target.name,
                                        "campaign": label, "annotators": n})  # fmt: skip
                print(
                    f"round {round_number}: {target.name:>19} {label:>5} {n:>2} annotators: "
                    f"{result['requests_per_s']:>6} req/s, p95 {result['p95_ms']} ms, "
                    f"CPU ms/req: server {result['server_cpu_ms_per_request']}, "
                    f"database {result['database_cpu_ms_per_request']}, "
                    f"client {result['client_cpu_ms_per_request']}, "
                    f"steal {result['steal_percent']} %, errors {result['errors']}, "
                    f"autovacuums {result['autovacuums']}, checkpoints {result['checkpoints']}, "
                    f"connections per process {result['connections_per_process']}",
                    flush=True,
                )
    phases = [
        pooled(runs[(target.name, label, n)])
        | {"target": target.name, "campaign": label, "annotators": n}
        for target in targets
        for n in args.annotators
        for label in LABELS
    ]
    return phases, rounds


def main() -> None:
    args = parse_args()
    if args.prepare:
        prepare_hardset(args)
        return
    if args.export_check:
        export_check(*args.export_check)
        return
    var_dir = Path(f"/tmp/hardset-bench-load-{os.getpid()}")
    databases: list[str] = []
    targets: list[Target] = []
    try:
        targets, skipped = build_targets(args, var_dir, databases)
        for target in targets:
            target.start()
        phases, rounds = load(targets, args)
        for target in targets:
            if target.process is not None:
                stop_server(target.process)
                target.process = None
        export = None
        pg = next((t for t in targets if t.name == "hardset/postgresql"), None)
        if pg is not None:
            export = run_export_check(pg.setup["env"], pg.setup["campaigns"])
        report = {
            "benchmark": "annotation_load",
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                        "platform": platform.platform(), "load_average": os.getloadavg()},
            "hardset_server": {"config": "config/gunicorn.py", "workers": args.workers,
                               "threads": args.threads, "debug": False},
            "targets": {t.name: {k: v for k, v in t.setup.items() if k != "env"}
                        for t in targets},
            "skipped": skipped,
            "existing_annotations": args.existing,
            "open_items": args.open_items,
            "seconds_per_phase": args.seconds,
            "rounds": args.rounds,
            "phases": phases,
            "comparisons": comparisons(phases, args),
            "scaling": scaling(phases, rounds, args),
            "per_round": rounds,
            "export_jsonl": export,
        }  # fmt: skip
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
        print(markdown(phases))
        for row in report["comparisons"] + report["scaling"]:
            print(row)
        print(f"export: {export}")
        print(f"wrote {args.output}")
    finally:
        for target in targets:
            if target.process is not None:
                stop_server(target.process)
        for name in databases:
            drop_database(args.pg, name)
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
