"""What each method of seed 001 §2–3 does, as data. Pure Python."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["METHODS", "MethodSpec", "spec", "steps_per_chain"]


@dataclass(frozen=True)
class MethodSpec:
    label: str
    uses_llm: bool  # every method but Seeds asks the LLM
    seeded: bool  # step 0 is a seed text (Seeds, MT-breaker seeded)
    iterative: bool  # MT-breaker: each step edits the previous one with the chat history
    qe_feedback: bool  # the LLM sees the QE score of each translation
    history: bool  # Zeroshot (history): earlier texts of the run are in the prompt
    repeated: bool  # Zeroshot (min): k independent generations, the hardest kept


METHODS: dict[str, MethodSpec] = {
    "seeds": MethodSpec("Seeds", False, True, False, False, False, False),
    "zeroshot": MethodSpec("Zeroshot", True, False, False, False, False, False),
    "zeroshot_history": MethodSpec("Zeroshot (history)", True, False, False, False, True, False),
    "zeroshot_min": MethodSpec("Zeroshot (min)", True, False, False, False, False, True),
    "breaker_seeded": MethodSpec("MT-breaker (seeded)", True, True, True, False, False, False),
    "breaker_seedless": MethodSpec("MT-breaker (seedless)", True, False, True, False, False, False),
    "breaker_seeded_qe": MethodSpec("MT-breaker (seeded+QE)", True, True, True, True, False, False),
    "breaker_seedless_qe": MethodSpec(
        "MT-breaker (seedless+QE)", True, False, True, True, False, False
    ),
}


def spec(method: str) -> MethodSpec:
    try:
        return METHODS[method]
    except KeyError:
        raise ValueError(f"unknown method {method!r}") from None


def steps_per_chain(method: str, n_steps: int, k_generations: int) -> int:
    """Evaluated sources per chain: step 0 plus ``n_steps`` edits for MT-breaker (App. C shows
    steps 0–10), ``k_generations`` for Zeroshot (min), one otherwise."""
    method_spec = spec(method)
    if method_spec.iterative:
        return n_steps + 1
    if method_spec.repeated:
        return k_generations
    return 1
