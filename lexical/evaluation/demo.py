"""Demo data for the evaluation: one evaluation of the given engines on a selection, run in the
foreground (the integrator chains it into ``load_demo`` after the corpus, mining, selection and
rules steps)."""

from __future__ import annotations

from collections.abc import Sequence

from lexical.evaluation.services import run_in_foreground, start_lexical_evaluation
from lexical.models import ExampleSelection, LexicalEvaluation

DEMO_SEED = 2024


def load(
    selection: ExampleSelection,
    engines: Sequence[str],
    *,
    rules_from: str | None = None,
    rule_less: Sequence[str] = (),
    translators: Sequence[str] = (),
    runs: int = 3,
) -> LexicalEvaluation:
    """Evaluate each chat engine without rules and with its own rules, and (when ``rules_from``
    names a generator) with that generator's rules; each ``rule_less`` engine (one that wrote
    no rules) without rules and with ``rules_from``'s; each translator as NMT. Idempotent: an
    evaluation of the same name on the selection is returned as it is."""
    name = f"Demo evaluation of {selection.name}"
    existing = LexicalEvaluation.objects.filter(selection=selection, name=name).first()
    if existing is not None:
        return existing
    entries = []
    for engine in engines:
        entries += [f"{engine}:none", f"{engine}:self"]
        if rules_from and rules_from != engine:
            entries.append(f"{engine}:other:{rules_from}")
    for engine in rule_less:
        entries.append(f"{engine}:none")
        if rules_from:
            entries.append(f"{engine}:other:{rules_from}")
    entries += [f"{translator}:translate" for translator in translators]
    config = {
        "name": name,
        "selection": selection.pk,
        "entries": entries,
        "runs": runs,
        "seed": DEMO_SEED,
    }
    evaluation = start_lexical_evaluation(config, enqueue=False)
    return run_in_foreground(evaluation.pk)
