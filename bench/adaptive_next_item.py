"""What an adaptive assignment policy adds to next-item and to submit (issue 42), in one run.

Two ESA campaigns with the same items, 15 systems × ``--segments`` segments (overlap 1), one in
the default order and one with an adaptive policy (``--policy``, default ``settle``, goal top),
each already ``--judged`` (a share of its items) judged by other annotators with scores drawn
per system, so the policy's state is not empty. One annotator then takes ``--pairs`` next-item
→ submit pairs in each campaign, the two campaigns alternating pair by pair (so both see the
same machine), and the script reports the median time of next-item and of submit (with its
commit, where the adaptive campaign checks its goal) and the ratio adaptive / ordered.

Django in process, ``DEBUG`` off, on ``--database-url`` (default: a fresh SQLite file under a
temporary folder; for PostgreSQL give an empty database, ``postgres://postgres@127.0.0.1:5432/<db>``,
which the script migrates and leaves behind).

    .venv/bin/python bench/adaptive_next_item.py                     # ~1 min
    .venv/bin/python bench/adaptive_next_item.py --segments 600 --pairs 100
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SYSTEMS = 15


def setup_django(var_dir: str, database_url: str | None) -> None:
    os.environ.update(HARDSET_VAR_DIR=var_dir, DEBUG="false", SECRET_KEY=secrets.token_urlsafe(50))
    os.environ["DATABASE_URL"] = database_url or f"sqlite:///{var_dir}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def build(name: str, segments: int, judged: float, rng: np.random.Generator, **settings):
    """A campaign of SYSTEMS × segments items, ``judged`` of them submitted by a crowd."""
    from annotation.models import Annotation, Assignment, Item
    from annotation.services.campaigns import create_campaign
    from annotation.services.enrollment import enroll
    from tests.annotation.factories import AnnotatorFactory

    items = [
        {"doc_id": f"d{segment}", "seg_id": str(segment), "source": f"Source {segment}.",
         "target": f"Target {segment} of system {system}.", "system": f"sys-{system:02d}",
         "src_lang": "en", "tgt_lang": "de"}
        for segment in range(segments)
        for system in range(SYSTEMS)
    ]  # fmt: skip
    campaign = create_campaign(name, "esa", items, qc_min_seconds_per_item=0, **settings)
    crowd = [AnnotatorFactory() for _ in range(5)]
    for annotator in crowd:
        enroll(annotator, campaign)
    chosen = rng.permutation(campaign.items.values_list("pk", flat=True))[
        : int(judged * len(items))
    ]
    done = list(Item.objects.filter(pk__in=chosen.tolist()))
    Assignment.objects.bulk_create(
        Assignment(campaign=campaign, item=item, annotator=crowd[i % 5], status="submitted",
                   expires_at=campaign.created_at)
        for i, item in enumerate(done)
    )  # fmt: skip
    Annotation.objects.bulk_create(
        Annotation(campaign=campaign, item=item, annotator=crowd[i % 5], status="submitted",
                   answer={"spans": [], "score": 1}, time_spent_seconds=30,
                   score=float(np.clip(80 - 2 * int(item.system[4:]) + rng.normal(0, 15), 0, 100)))
        for i, item in enumerate(done)
    )  # fmt: skip
    Item.objects.filter(pk__in=chosen.tolist()).update(completed_count=1, live_slots=1)
    return campaign


def one_pair(annotator, campaign) -> tuple[float, float]:
    from django.db import transaction

    from annotation.services.claims import next_item_for
    from annotation.services.submissions import submit_annotation

    start = time.perf_counter()
    item = next_item_for(annotator, campaign)
    claimed = time.perf_counter()
    assert item is not None
    with transaction.atomic():  # its on-commit goal check runs inside the timing
        submit_annotation(annotator, item, {"spans": [], "score": 70})
    return claimed - start, time.perf_counter() - claimed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--judged", type=float, default=0.3)
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--policy", default="settle")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as var_dir:
        setup_django(var_dir, args.database_url)
        from annotation.services.enrollment import enroll
        from tests.annotation.factories import AnnotatorFactory

        rng = np.random.default_rng(0)
        tag = secrets.token_hex(3)
        campaigns = {
            "ordered": build(f"ordered-{tag}", args.segments, args.judged, rng),
            args.policy: build(
                f"adaptive-{tag}", args.segments, args.judged, rng, assignment_policy=args.policy
            ),
        }
        annotator = AnnotatorFactory()
        for campaign in campaigns.values():
            enroll(annotator, campaign)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in campaigns}
        for _ in range(5):  # warm-up: caches, compiled queries
            for campaign in campaigns.values():
                one_pair(annotator, campaign)
        for _ in range(args.pairs):
            for name, campaign in campaigns.items():
                times[name].append(one_pair(annotator, campaign))
    med = {name: [statistics.median(t[i] for t in pairs) * 1e3 for i in (0, 1)]
           for name, pairs in times.items()}  # fmt: skip
    base = med["ordered"]
    database = "PostgreSQL" if args.database_url else "SQLite"
    print(f"{SYSTEMS} systems × {args.segments} segments, {args.judged:.0%} judged, "
          f"{args.pairs} pairs each, {database}")  # fmt: skip
    print("| assignment | next-item (ms) | / ordered | submit + goal check (ms) | / ordered |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (claim, submit) in med.items():
        print(f"| {name} | {claim:.2f} | {claim / base[0]:.2f} | {submit:.2f} | "
              f"{submit / base[1]:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
