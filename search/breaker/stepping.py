"""One round's engine work: every chain that advances gets its next step (seed 001 Alg. 1).

1. plan: from the stored steps, what each advancing chain asks (nothing for a seed; the first
   prompt for a fresh text; the whole chat for an MT-breaker edit);
2. ask the LLM for all chains at once (``complete_many``: concurrent within the engine's
   limit), re-asking chains whose answer has no usable text, a bounded number of times;
3. translate every new source with each target, then score each translation with each QE
   engine (batched per engine, so concurrent too);
4. return one :class:`StepResult` per chain: a new step, or the error that ends that chain
   (the others go on).

No database writes: every call goes through the engines' call path, which caches and books
each paid answer as it lands, so a round that is re-run after a crash asks the same questions
(the chat is rebuilt from stored steps) and is answered from the cache. Transient engine errors
propagate (the round is retried); permanent ones are isolated to the chains they concern.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import TypeVar

from engines.interfaces import EngineError, isolated
from engines.models import Engine
from engines.registry import resolve
from search.breaker import prompts
from search.breaker.asking import ask_until_parsed
from search.breaker.diff import edit_share
from search.breaker.methods import MethodSpec, spec
from search.breaker.parsing import parse_source, word_count
from search.breaker.selection import mean_quality
from search.models import BreakerChain, BreakerRun, BreakerStep

__all__ = ["Planned", "StepResult", "isolated", "plan_round", "run_round"]

T = TypeVar("T")


@dataclass
class Planned:
    """What one chain does this round."""

    chain: BreakerChain
    step_index: int
    messages: list[dict[str, str]] | None  # None: the step's source is the seed
    previous_source: str = ""


@dataclass
class StepResult:
    chain_id: int
    step_index: int
    source: str = ""
    llm_text: str = ""
    parse_attempts: int = 0
    translations: dict[str, str] = field(default_factory=dict)
    qe: dict[str, dict[str, float]] = field(default_factory=dict)
    quality: float = 0.0
    edit_share: float | None = None
    llm_cost: Decimal = Decimal(0)
    error: str = ""


def _view(run: BreakerRun, step: BreakerStep) -> prompts.StepView:
    per_target = [sum(step.qe[t].values()) / len(step.qe[t]) for t in run.targets]
    return prompts.StepView(
        step.source, step.llm_text, [step.translations[t] for t in run.targets], per_target,
        step.quality,
    )  # fmt: skip


def _request(run: BreakerRun, chain: BreakerChain, step: int, method: MethodSpec) -> str:
    # Numbers the request so the items of a set are distinct requests (and cache entries);
    # runs with the same seed share their first texts (common random numbers).
    label = f"{run.seed}-{chain.index}"
    return f"{label}-{step}" if method.repeated else label


def plan_round(
    run: BreakerRun, chains: Sequence[BreakerChain], steps: dict[int, list[BreakerStep]]
) -> list[Planned]:
    """The work of the round for the active ``chains`` (``steps``: stored steps per chain)."""
    method = spec(run.method)
    active = [c for c in chains if c.status == BreakerChain.Status.ACTIVE]
    earlier: list[str] = []
    if method.history:
        # Later chains see what earlier rounds generated; a round generates one batch.
        earlier = [c.selected_text for c in chains if c.steps_done and c.selected_text]
        active = [c for c in active if not c.steps_done][: run.history_batch]
    planned = []
    for chain in active:
        done = steps.get(chain.pk, [])
        index = len(done)
        words = chain.target_words or run.target_words
        first = prompts.first_prompt(
            run.src_lang, run.tgt_lang, words, _request(run, chain, index, method), earlier
        )
        if index == 0 and method.seeded:
            planned.append(Planned(chain, 0, None))
        elif method.iterative and index > 0:
            messages = prompts.conversation(
                first,
                [_view(run, s) for s in done],
                qe_feedback=method.qe_feedback,
                max_edit_share=run.max_edit_share,
            )
            planned.append(Planned(chain, index, messages, done[-1].source))
        else:
            planned.append(Planned(chain, index, [{"role": "user", "content": first}]))
    return planned


def _llm_price(engine: Engine, tokens_in: int, tokens_out: int) -> Decimal:
    cost = (tokens_in * engine.price_in_per_1k + tokens_out * engine.price_out_per_1k) / 1000
    return Decimal(cost).quantize(Decimal("0.00000001"))


def _ask_llm(run: BreakerRun, planned: list[Planned], results: dict[int, StepResult]) -> None:
    """Fill each planned chain's source from the LLM, re-asking unusable answers."""
    asking = [p for p in planned if p.messages is not None]
    if not asking:
        return
    assert run.llm_engine is not None  # chains ask an LLM only in runs that have one
    llm_engine = run.llm_engine
    chat = resolve(llm_engine, "chat", scope=run.scope)
    chats = {p.chain.pk: list(p.messages or []) for p in asking}
    asked = ask_until_parsed(chat, chats, parse_source, prompts.reask, run.max_parse_attempts)
    for chain_id, outcome in asked.items():
        result = results[chain_id]
        for answer in outcome.answers:
            result.parse_attempts += 1
            result.llm_cost += _llm_price(llm_engine, answer.tokens_in, answer.tokens_out)
        if outcome.error:
            result.error = f"step {result.step_index}: the LLM failed: {outcome.error}"
        elif outcome.ok:
            result.source, result.llm_text = outcome.value or "", outcome.text
        else:
            result.error = (
                f"step {result.step_index}: no usable text after {result.parse_attempts} answers "
                f"({outcome.reason}); last answer: {outcome.last[:200]!r}"
            )


def _translate_and_score(run: BreakerRun, results: list[StepResult]) -> None:
    for target in run.targets:
        ok = [r for r in results if not r.error]
        translator = resolve(target, "translate", scope=run.scope)
        outputs = isolated(
            partial(translator.translate, src_lang=run.src_lang, tgt_lang=run.tgt_lang),
            [r.source for r in ok],
        )
        for result, output in zip(ok, outputs, strict=True):
            if isinstance(output, EngineError):
                result.error = f"step {result.step_index}: {target} failed: {output.message}"
            else:
                result.translations[target] = output
    for target in run.targets:
        for name in run.qe_engines:
            ok = [r for r in results if not r.error]
            estimator = resolve(name, "quality", scope=run.scope)
            scores = isolated(
                partial(estimator.score, src_lang=run.src_lang, tgt_lang=run.tgt_lang),
                [(r.source, r.translations[target]) for r in ok],
            )
            for result, score in zip(ok, scores, strict=True):
                if isinstance(score, EngineError):
                    result.error = f"step {result.step_index}: QE {name} failed: {score.message}"
                else:
                    result.qe.setdefault(target, {})[name] = float(score)


def run_round(run: BreakerRun, planned: list[Planned]) -> list[StepResult]:
    """Every planned chain's next step (or its error); see the module docstring."""
    results = {p.chain.pk: StepResult(p.chain.pk, p.step_index) for p in planned}
    for p in planned:
        if p.messages is None:
            results[p.chain.pk].source = p.chain.seed_text
    _ask_llm(run, planned, results)
    ordered = [results[p.chain.pk] for p in planned]
    _translate_and_score(run, ordered)
    for p, result in zip(planned, ordered, strict=True):
        if result.error:
            continue
        result.quality = mean_quality(result.qe)
        if p.previous_source:
            result.edit_share = edit_share(p.previous_source, result.source)
    return ordered


def new_step(result: StepResult) -> BreakerStep:
    return BreakerStep(
        chain_id=result.chain_id,
        index=result.step_index,
        source=result.source,
        llm_text=result.llm_text,
        parse_attempts=result.parse_attempts,
        translations=result.translations,
        qe=result.qe,
        quality=result.quality,
        edit_share=result.edit_share,
        word_count=word_count(result.source),
        llm_cost=result.llm_cost,
    )
