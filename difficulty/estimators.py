"""Difficulty estimators evaluated on a difficulty dataset (seed 002 §4, App. E).

Every estimator returns a *quality-like* score (higher = easier), the convention of seed 002 and
``engines.interfaces.DifficultyEstimator``; DEC correlates it with human quality scores, so a
useful estimator has a positive DEC. Names and sign conventions:

=====================  =======================================================================
``length``             −(number of ``wordfreq`` tokens of the source): longer = harder.
``chars``              −(number of characters of the source).
``rarity``             mean ``wordfreq`` frequency of the source's tokens, *not* negated, as in
                       seed 002's code (the paper's prose says "negative"; its tables show the
                       resulting negative DEC). Frequent words = "easier".
``random``             uniform draw per segment *and* system, seeded: the no-skill baseline.
``syntax``             −(height of the dependency tree): deeper = harder. Only where a spaCy
                       pipeline with a parser is installed; otherwise it is reported unavailable.
``llm-judge:<engine>`` an ``openai_chat`` engine as LLM judge (§4.3): proficiency 0–120 mapped by
                       the engine to quality-like 0–100; told the target language if the engine
                       is configured so.
``crowd:<engine>``     an ``artificial_crowd`` engine (§4.4): mean QE score (0–100) of its
                       translators' outputs into the pair's target language.
``learned:<engine>``   a ``local_difficulty`` engine: a source-only regression model from a local
                       path (Sentinel-src / PreCOMET-style), its output mapped to quality-like
                       0–100 by the engine's ``output_scale``.
``metric:<field>``     a score that came with the dataset in extra field ``<field>``, read as
                       quality-like; ``metric:-<field>`` negates a difficulty-like field. A
                       number per segment, or ``{system: score}`` per segment and system.
``oracle-src``         reference, not an estimator: the mean human score of the same source over
                       every evaluated system and language pair (App. E, "source text only").
``oracle-src-lang``    reference: the mean human score of the segment over the language pair's
                       evaluated systems (App. E, "source text + target language").
=====================  =======================================================================

Source-only heuristics are computed once per distinct (source language, text). Engine
estimators are called through ``engines.registry`` in chunks of distinct sources, with the scope
``dataset_eval:<evaluation id>`` so their cost is summed per evaluation.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from difficulty import dec
from engines import heuristics
from engines.interfaces import EngineError
from engines.registry import get_engine, refusal, resolve

__all__ = [
    "ENGINE_KINDS",
    "LOCAL_ESTIMATORS",
    "EstimatorError",
    "EstimatorSpec",
    "PairData",
    "check_estimator",
    "compute_local",
    "describe",
    "estimate_with_engine",
    "estimator_rng",
    "parse_estimator",
]

LOCAL_ESTIMATORS: dict[str, str] = {
    "length": "−(number of wordfreq tokens of the source): longer = harder.",
    "chars": "−(number of characters of the source).",
    "rarity": (
        "Mean wordfreq frequency of the source's tokens, not negated (as in seed 002's code): "
        "frequent words count as easier."
    ),
    "random": "Uniform random draw per segment and system (seeded): the no-skill baseline.",
    "syntax": "−(height of the dependency tree, spaCy): deeper = harder.",
    "oracle-src": (
        "Reference, uses the answers: mean human score of the same source over all evaluated "
        "systems and language pairs."
    ),
    "oracle-src-lang": (
        "Reference, uses the answers: mean human score of the segment over the language "
        "pair's evaluated systems."
    ),
}
# Prefix → (engine kind it needs, description).
ENGINE_KINDS: dict[str, tuple[str, str]] = {
    "llm-judge": (
        "openai_chat",
        "LLM judge: proficiency 0–120 mapped to quality-like 0–100 (higher = easier).",
    ),
    "crowd": (
        "artificial_crowd",
        "Artificial crowd: mean QE score (0–100) of the crowd's translations.",
    ),
    "learned": (
        "local_difficulty",
        "Learned source-only estimator (a local regression model, e.g. Sentinel-src-style): "
        "its output mapped to quality-like 0–100 by the engine's output_scale.",
    ),
}
METRIC_DESCRIPTION = (
    "A score that came with the dataset in an extra field, read as quality-like "
    "(metric:-field negates it)."
)


class EstimatorError(Exception):
    """An estimator that cannot be used or failed; the message says why, for the user."""


@dataclass(frozen=True)
class EstimatorSpec:
    """A parsed estimator name such as ``length``, ``llm-judge:gpt4o`` or ``metric:-mqm``."""

    name: str
    kind: str
    argument: str = ""
    negate: bool = False

    @property
    def uses_engine(self) -> bool:
        return self.kind in ENGINE_KINDS

    @property
    def is_reference(self) -> bool:
        return self.kind.startswith("oracle")


def parse_estimator(name: str) -> EstimatorSpec:
    """Parse an estimator name; :class:`EstimatorError` lists the valid forms otherwise."""
    name = name.strip()
    if name in LOCAL_ESTIMATORS:
        return EstimatorSpec(name, name)
    prefix, sep, argument = name.partition(":")
    if sep and argument:
        if prefix in ENGINE_KINDS:
            return EstimatorSpec(name, prefix, argument)
        if prefix == "metric":
            negate = argument.startswith("-")
            field_name = argument[1:] if negate else argument
            if field_name:
                return EstimatorSpec(name, "metric", field_name, negate)
    engine_forms = [f"{prefix}:<engine>" for prefix in ENGINE_KINDS]
    valid = ", ".join([*LOCAL_ESTIMATORS, *engine_forms, "metric:<field>"])
    raise EstimatorError(f"unknown estimator {name!r}; use one of {valid}")


def describe(spec: EstimatorSpec) -> str:
    if spec.kind in LOCAL_ESTIMATORS:
        return LOCAL_ESTIMATORS[spec.kind]
    if spec.kind == "metric":
        sign = "negated " if spec.negate else ""
        return f"The dataset's {sign}extra field {spec.argument!r}, read as quality-like."
    return ENGINE_KINDS[spec.kind][1]


@dataclass
class PairData:
    """What estimators may read about one language pair; rows are segments.

    ``human`` holds only the evaluated systems (references left out unless asked for).
    ``extra`` and ``line_numbers`` are loaded only when a ``metric:`` estimator needs them.
    """

    code: str
    src_lang: str
    tgt_lang: str
    systems: tuple[str, ...]
    human: np.ndarray
    sources: list[str]
    source_keys: np.ndarray
    extra: list[dict[str, Any]] | None = None
    line_numbers: list[int] | None = None
    _distinct: tuple[list[str], np.ndarray] | None = field(default=None, repr=False)

    @property
    def n_segments(self) -> int:
        return len(self.sources)

    def distinct_sources(self) -> tuple[list[str], np.ndarray]:
        """Distinct source texts in order of first row, and each row's index into them."""
        if self._distinct is None:
            index: dict[str, int] = {}
            rows = np.empty(len(self.sources), dtype=np.intp)
            for row, text in enumerate(self.sources):
                rows[row] = index.setdefault(text, len(index))
            self._distinct = (list(index), rows)
        return self._distinct


def estimator_rng(seed: int, name: str, *stream: int) -> np.random.Generator:
    """The generator for one estimator of one evaluation: same seed and name, same draws,
    wherever the estimator sits in the list."""
    return np.random.default_rng([seed, zlib.crc32(name.encode()), *stream])


# --- Availability ----------------------------------------------------------------------------


def check_estimator(spec: EstimatorSpec, pairs: Sequence[tuple[str, str]]) -> None:
    """Raise :class:`EstimatorError` if ``spec`` cannot run on these (src, tgt) language pairs."""
    src_langs = sorted({src for src, _ in pairs})
    if spec.kind == "syntax":
        missing = [lang for lang in src_langs if not heuristics.syntax_available(lang)]
        if missing:
            raise EstimatorError(
                "estimator 'syntax' is unavailable here: no spaCy pipeline with a dependency "
                f"parser is installed for source language(s) {', '.join(missing)} (install e.g. "
                f"{missing[0]}_core_web_sm, or leave 'syntax' out)"
            )
    elif spec.kind in ("length", "rarity"):
        for lang in src_langs:
            reason = heuristics.words_unavailable_reason(lang, frequencies=spec.kind == "rarity")
            if reason:
                raise EstimatorError(
                    f"estimator {spec.kind!r} is unavailable for source language {lang}: "
                    f"{reason} (leave {spec.kind!r} out)"
                )
    elif spec.uses_engine:
        wanted_kind = ENGINE_KINDS[spec.kind][0]
        try:
            engine = get_engine(spec.argument)
        except EngineError as exc:
            raise EstimatorError(f"{spec.name}: {exc}") from exc
        if engine.kind != wanted_kind:
            raise EstimatorError(
                f"{spec.name}: engine {engine.name} is of kind {engine.kind}; "
                f"{spec.kind} needs an engine of kind {wanted_kind}"
            )
        problem = refusal(engine, engine.name, "difficulty")
        if problem:
            raise EstimatorError(f"{spec.name}: {problem}")


# --- Computing -------------------------------------------------------------------------------


def _per_source(
    pairs: Sequence[PairData], feature: Callable[[str, str], float]
) -> list[np.ndarray]:
    """Apply a source-only feature once per distinct (source language, text)."""
    cache: dict[tuple[str, str], float] = {}
    out = []
    for pair in pairs:
        texts, rows = pair.distinct_sources()
        values = np.empty(len(texts))
        for i, text in enumerate(texts):
            key = (pair.src_lang, text)
            if key not in cache:
                cache[key] = float(feature(text, pair.src_lang))
            values[i] = cache[key]
        out.append(values[rows])
    return out


def _metric(pair: PairData, spec: EstimatorSpec) -> np.ndarray:
    if pair.extra is None:
        raise RuntimeError("metric estimators need the pair's extra fields loaded")
    n, columns = pair.n_segments, {system: j for j, system in enumerate(pair.systems)}
    per_cell = any(isinstance(extra.get(spec.argument), dict) for extra in pair.extra)
    values = np.full((n, len(columns)) if per_cell else n, np.nan)
    found = False
    for row, extra in enumerate(pair.extra):
        value = extra.get(spec.argument)
        if value is None:
            continue
        found = True
        where = f"line {pair.line_numbers[row]}" if pair.line_numbers else f"{pair.code} row {row}"
        if isinstance(value, dict):
            for system, score in value.items():
                if system in columns and score is not None:
                    values[row, columns[system]] = _number(score, spec, where)
        else:
            values[row] = _number(value, spec, where)
    if not found:
        raise EstimatorError(
            f"{spec.name}: no segment of {pair.code} has a value in extra field {spec.argument!r}"
        )
    return -values if spec.negate else values


def _number(value: Any, spec: EstimatorSpec, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EstimatorError(
            f"{spec.name}: {where} has {value!r} in {spec.argument!r}; a number is needed"
        )
    return float(value)


def compute_local(spec: EstimatorSpec, pairs: Sequence[PairData], seed: int) -> list[np.ndarray]:
    """Scores of a non-engine estimator for every pair: arrays of (n,) or (n, systems)."""
    try:
        if spec.kind == "length":
            return _per_source(pairs, lambda t, lang: -heuristics.token_count(t, lang))
        if spec.kind == "chars":
            return _per_source(pairs, lambda t, lang: -heuristics.char_count(t))
        if spec.kind == "rarity":
            return _per_source(pairs, heuristics.word_rarity)
        if spec.kind == "syntax":
            check_estimator(spec, [(p.src_lang, p.tgt_lang) for p in pairs])
            return _per_source(pairs, lambda t, lang: -heuristics.syntax_depth(t, lang))
    except EngineError as exc:
        raise EstimatorError(f"{spec.name}: {exc}") from exc
    if spec.kind == "random":
        rng = estimator_rng(seed, spec.name)
        return [rng.random(pair.human.shape) for pair in pairs]
    if spec.kind == "metric":
        return [_metric(pair, spec) for pair in pairs]
    if spec.kind == "oracle-src-lang":
        return [dec.oracle_source_language(pair.human) for pair in pairs]
    if spec.kind == "oracle-src":
        return dec.oracle_source([p.human for p in pairs], [p.source_keys for p in pairs])
    raise EstimatorError(f"{spec.name} is computed by an engine, not locally")


def estimate_with_engine(
    spec: EstimatorSpec, pair: PairData, texts: Sequence[str], scope: str
) -> np.ndarray:
    """One chunk of an engine estimator: quality-like scores of ``texts`` in ``pair``."""
    check_estimator(spec, [(pair.src_lang, pair.tgt_lang)])
    try:
        estimator = resolve(spec.argument, "difficulty", scope=scope)
        values = estimator.estimate(list(texts), pair.src_lang, pair.tgt_lang)
    except EngineError as exc:
        kind = "permanent" if exc.permanent else "transient, after retries"
        raise EstimatorError(f"{spec.name}: engine error ({kind}): {exc}") from exc
    if len(values) != len(texts):
        raise EstimatorError(
            f"{spec.name}: the engine returned {len(values)} scores for {len(texts)} texts"
        )
    return np.asarray(values, dtype=float)
