"""Offline rule generation for ``load_demo`` (a SIMULATION): two ``lexical_world`` generator
engines of different skill write rules for a mining job's concepts, in the foreground.

The integrator chains :func:`load_rules_demo` after the mining demo. Idempotent: an engine that
already wrote rules for the mining job is not asked again.
"""

from __future__ import annotations

from typing import Any

from engines.models import Engine
from engines.services import save_engine
from lexical.models import MiningJob, RuleJob
from lexical.rules.services import run_in_foreground, start_rule_jobs

__all__ = ["WORLD_ENGINES", "load_rules_demo", "world_generators"]

WORLD_ENGINES: list[dict[str, Any]] = [
    {"name": "sim-lexical-strong", "kind": "lexical_world", "capabilities": ["chat"],
     "params": {"skill": 0.8, "rule_words": 4},
     "description": "SIMULATION: writes rules from the examples' frequent words; picks "
     "variations by overlap with rules (skill 0.8 without)."},
    {"name": "sim-lexical-weak", "kind": "lexical_world", "capabilities": ["chat"],
     "params": {"skill": 0.2, "rule_words": 2},
     "description": "SIMULATION: shorter rules; mostly guesses without rules (skill 0.2)."},
]  # fmt: skip


def world_generators() -> list[Engine]:
    """The simulated generator engines, created once."""
    return [
        Engine.objects.filter(name=spec["name"]).first() or save_engine(spec)
        for spec in WORLD_ENGINES
    ]


def load_rules_demo(
    stdout, mining_job: MiningJob | None = None, *, concepts: list[int] | None = None
) -> list[RuleJob]:
    """Rules from both world engines for ``mining_job``'s active concepts (the latest finished
    mining job when none is given) or for explicit ``concepts``; returns the jobs run."""
    source: dict[str, Any] = {"concepts": concepts}
    if concepts is None:
        mining_job = (
            mining_job or MiningJob.objects.filter(status="finished").order_by("-pk").first()
        )
        if mining_job is None:
            stdout.write("rules demo: no mining job to write rules for; skipped")
            return []
        source = {"mining_job": mining_job.pk}
    done = []
    for engine in world_generators():
        earlier = RuleJob.objects.filter(engine=engine.name, status="finished")
        if concepts is None and earlier.filter(mining_job=mining_job).exists():
            continue
        (job,) = start_rule_jobs({"engines": [engine.name], **source}, enqueue=False)
        job = run_in_foreground(job.pk)
        stdout.write(
            f"rules demo: {engine.name} wrote rules for {job.items_done - job.concepts_failed} "
            f"of {job.items_total} concepts (job #{job.pk}, {job.status})"
        )
        done.append(job)
    return done
