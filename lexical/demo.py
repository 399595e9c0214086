"""Offline demo data of the lexical app (called by ``manage.py load_demo``; idempotent), the
whole seed 004 flow on SIMULATED engines: a synthetic corpus with mined concepts, an example
selection, rules from two ``lexical_world`` generators, and an evaluation of three engines
without rules, with their own rules and with the strong generator's rules; then both human
studies of the selection, answered by SIMULATED annotators (``lexical.studies.demo``)."""

from __future__ import annotations

from typing import Any

from engines.models import Engine
from engines.services import save_engine
from lexical.concepts.demo import create_selection_for_demo
from lexical.evaluation import demo as evaluation_demo
from lexical.mining import demo as mining_demo
from lexical.rules.demo import WORLD_ENGINES, load_rules_demo
from lexical.studies import demo as studies_demo

# A third simulated engine that writes no rules: evaluated without rules and with others'.
GUESSER: dict[str, Any] = {
    "name": "sim-lexical-guesser",
    "kind": "lexical_world",
    "capabilities": ["chat"],
    "params": {"skill": 0.5, "rule_words": 3},
    "description": "SIMULATION: picks variations by overlap with rules (skill 0.5 without).",
}


def load_demo(stdout) -> None:
    job = mining_demo.load(stdout)
    selection = create_selection_for_demo(job)
    if selection is None:
        stdout.write("lexical: no concept qualified for an example selection; stopped there")
        return
    load_rules_demo(stdout, job)
    if not Engine.objects.filter(name=GUESSER["name"]).exists():
        save_engine(GUESSER)
    generators = [spec["name"] for spec in WORLD_ENGINES]
    evaluation = evaluation_demo.load(
        selection, generators, rules_from=generators[0], rule_less=[GUESSER["name"]], runs=3
    )
    stdout.write(
        f"lexical: selection {selection.name!r} ({selection.selected.count()} examples), "
        f"evaluation #{evaluation.pk} {evaluation.status}"
    )
    studies_demo.load(stdout, job, selection)
