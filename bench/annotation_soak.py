"""32 annotators for a few minutes on PostgreSQL, then every answer checked in the database.

A correctness load test on the machinery of ``annotation_load.py``: the same server (this
working tree under gunicorn with ``config/gunicorn.py``, ``DEBUG`` off, loopback only), the same
closed loop of ``next-item`` → ``submit`` (with an ``Idempotency-Key``), on its two campaigns
(``empty``, and one holding ``--existing`` annotations; overlap 1), one phase each of
``--seconds``. Afterwards, in the database:

* no request failed (no error status, no transport error);
* every acknowledged submit (201) is stored, exactly once, on the item it was sent for, and
  nothing else was stored by the load annotators (no lost and no duplicated answer);
* no item holds more submitted annotations than the campaign's overlap, no annotator answered
  an item twice, and every item's counter of submitted annotations matches its rows.

    .venv/bin/python bench/annotation_soak.py      # 2 × 90 s; bench/results/annotation_soak.json
    .venv/bin/python bench/annotation_soak.py --seconds 10 --existing 2000

Needs PostgreSQL at --pg (default postgres://postgres@127.0.0.1:5432); its database is dropped
at the end. Exits non-zero when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import annotation_load as load  # noqa: E402  (bench/ is on the path: scripts run from there)

RESULTS = ROOT / "bench" / "results"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=90.0, help="per campaign")
    parser.add_argument("--existing", type=int, default=20_000)
    parser.add_argument("--open-items", type=int, default=30_000)
    parser.add_argument("--workers", type=int, help="default: config/gunicorn.py's")
    parser.add_argument("--threads", type=int, help="default: config/gunicorn.py's")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--output", default=str(RESULTS / "annotation_soak.json"))
    # Child-process mode: check the answers listed in a JSON file against the database.
    parser.add_argument("--verify", metavar="FILE", help=argparse.SUPPRESS)
    return parser.parse_args()


def verify(path: str) -> None:
    """Child-process mode (Django on DATABASE_URL): print the checks of each campaign as JSON."""
    import django

    django.setup()
    plan = json.loads(Path(path).read_text())
    print(json.dumps({label: check_campaign(**spec) for label, spec in plan.items()}))


def check_campaign(campaign_id: int, prefix: str, acknowledged: list[list[int]]) -> dict:
    from django.db.models import Count, F, Q

    from annotation.models import Annotation, Campaign, Item

    campaign = Campaign.objects.get(pk=campaign_id)
    submitted = Annotation.objects.filter(campaign=campaign, status="submitted")
    by_load = dict(
        submitted.filter(annotator__pseudonym__startswith=f"{prefix}-").values_list("id", "item_id")
    )
    answer_ids = [answer_id for _item, answer_id in acknowledged]
    per_item = Item.objects.filter(campaign=campaign).annotate(
        stored=Count("annotations", filter=Q(annotations__status="submitted"))
    )
    pairs = submitted.values("item_id", "annotator_id").annotate(n=Count("id")).filter(n__gt=1)
    return {
        "acknowledged": len(answer_ids),
        "stored_by_load": len(by_load),
        "acknowledged_twice": sum(n - 1 for n in Counter(answer_ids).values()),
        "acknowledged_not_stored": len(set(answer_ids) - set(by_load)),
        "stored_not_acknowledged": len(set(by_load) - set(answer_ids)),
        "on_another_item": sum(by_load.get(a, i) != i for i, a in acknowledged),
        "items_over_overlap": per_item.filter(stored__gt=campaign.overlap).count(),
        "annotator_item_twice": pairs.count(),
        "counter_mismatch": per_item.exclude(completed_count=F("stored")).count(),
    }


def failures(report: dict) -> list[str]:
    found = [f"{p['campaign']}: {p['errors']} errors" for p in report["phases"] if p["errors"]]
    for label, checks in report["checks"].items():
        if checks["acknowledged"] != checks["stored_by_load"]:
            found.append(f"{label}: {checks['acknowledged']} acknowledged, "
                         f"{checks['stored_by_load']} stored")  # fmt: skip
        found += [f"{label}: {name} = {value}" for name, value in checks.items()
                  if name not in ("acknowledged", "stored_by_load") and value]  # fmt: skip
    return found


def soak(args) -> dict:
    var_dir = Path(f"/tmp/hardset-bench-soak-{os.getpid()}")
    database = None
    target = None
    try:
        database, url = load.create_database(args.pg, "soak")
        options = argparse.Namespace(
            annotators=[args.annotators], rounds=1, existing=args.existing,
            open_items=args.open_items, workers=args.workers, threads=args.threads,
            export_campaign=False, warm_up=0,  # a correctness run: every phase is checked
        )  # fmt: skip
        target = load.hardset_target("hardset/postgresql", ROOT, url, var_dir / "pg", options)
        target.start()
        phases, plan = [], {}
        for label in load.LABELS:
            samples = load.run_phase(target.phase_clients(label, args.annotators, 1), args.seconds)
            phases.append(load.summarize(samples, samples.wall) | {"campaign": label})
            summary = phases[-1]
            print(f"{label}: {summary['requests_per_s']} req/s, {len(samples.stored)} answers, "
                  f"errors {summary['errors']}", flush=True)  # fmt: skip
            key = load.phase_key(label, args.annotators, 1)
            plan[label] = {
                "campaign_id": target.setup["phase_campaigns"][key],
                "prefix": key,
                "acknowledged": samples.stored,
            }
        load.stop_server(target.process)
        target.process = None
        plan_file = var_dir / "acknowledged.json"
        plan_file.write_text(json.dumps(plan))
        command = [sys.executable, str(Path(__file__).resolve()), "--verify", str(plan_file)]
        done = subprocess.run(command, cwd=ROOT, env=target.setup["env"], check=True,
                              capture_output=True, text=True)  # fmt: skip
        checks = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        if target is not None and target.process is not None:
            load.stop_server(target.process)
        if database:
            load.drop_database(args.pg, database)
        shutil.rmtree(var_dir, ignore_errors=True)
    return {
        "benchmark": "annotation_soak",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform(), "load_average": os.getloadavg()},
        "hardset_server": {"config": "config/gunicorn.py", "workers": args.workers,
                           "threads": args.threads},
        "annotators": args.annotators,
        "seconds_per_campaign": args.seconds,
        "existing_annotations": args.existing,
        "open_items": args.open_items,
        "phases": phases,
        "checks": checks,
    }  # fmt: skip


def main() -> None:
    args = parse_args()
    if args.verify:
        verify(args.verify)
        return
    started = time.perf_counter()
    report = soak(args)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    report["failures"] = failures(report)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["checks"], indent=2))
    print(f"wrote {args.output}")
    if report["failures"]:
        sys.exit("FAILED: " + "; ".join(report["failures"]))
    print("all checks passed")


if __name__ == "__main__":
    main()
