"""Mining parameters with the paper's defaults (seed 004 App. B.1), validated on the way in."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["MiningParams", "MiningParamsError", "parse_params"]


class MiningParamsError(ValueError):
    """Refused parameters; ``errors`` maps each field to what is wrong with it."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class MiningParams:
    # App. B.1: a variation counts when aligned at least 50 times ...
    min_variation_count: int = 50
    # ... a source word is kept with at least two such variations ...
    min_variations: int = 2
    # ... and an entropy (nats) of its variation distribution of at least 0.69.
    min_entropy: float = 0.69
    # Examples kept per variation: the longest ones with fewer than ``example_token_limit``
    # source tokens (the rules step reads the 50 longest under 50 tokens, §3).
    max_examples: int = 100
    example_token_limit: int = 50
    # Leave out punctuation, numbers and the most frequent words of each language (wordfreq's
    # top-N list); 0 keeps every word.
    stopword_top_n: int = 50
    # Pairs read, lemmatised and aligned together; one worker round each.
    chunk_size: int = 20_000
    # An installed spaCy package name or a local path of a pipeline with a tagger; empty: no POS.
    pos_pipeline: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_INT_BOUNDS = {
    "min_variation_count": (1, 10**9),
    "min_variations": (2, 1000),
    "max_examples": (1, 10_000),
    "example_token_limit": (2, 10_000),
    "stopword_top_n": (0, 1000),
    "chunk_size": (100, 1_000_000),
}


def _int(value: Any, low: int, high: int) -> tuple[int | None, str]:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None, "must be a whole number"
    try:
        number = int(value)
    except ValueError:
        return None, "must be a whole number"
    if not low <= number <= high:
        return None, f"must be between {low} and {high}"
    return number, ""


def parse_params(raw: Any) -> MiningParams:
    """Parameters from a JSON object (API, form, command); unknown keys are refused."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise MiningParamsError({"params": "must be a JSON object"})
    known = {f.name for f in fields(MiningParams)}
    errors = {str(key)[:50]: "unknown parameter" for key in raw if key not in known}
    values: dict[str, Any] = {}
    for name, (low, high) in _INT_BOUNDS.items():
        if name in raw:
            number, error = _int(raw[name], low, high)
            if error:
                errors[name] = error
            else:
                values[name] = number
    if "min_entropy" in raw:
        value = raw["min_entropy"]
        try:
            entropy = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError):
            entropy = math.nan
        if not (math.isfinite(entropy) and 0.0 <= entropy <= 100.0):
            errors["min_entropy"] = "must be a number between 0 and 100"
        else:
            values["min_entropy"] = entropy
    if "pos_pipeline" in raw:
        pipeline = raw["pos_pipeline"]
        if not isinstance(pipeline, str) or len(pipeline) > 500 or "\x00" in pipeline:
            errors["pos_pipeline"] = "must be a package name or a path (at most 500 characters)"
        else:
            values["pos_pipeline"] = pipeline.strip()
    if errors:
        raise MiningParamsError(errors)
    return MiningParams(**values)
