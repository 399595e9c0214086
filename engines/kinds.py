"""What each engine kind can do and which parameters it accepts.

Pure Python (no Django): used by the model's ``clean()``, the forms, the API serializer and the
importer, so an engine is validated the same way whichever door it comes in by.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from engines.local_models.comet import FORMATS as COMET_FORMATS
from engines.local_models.ctranslate2_backend import BACKENDS, COMPUTE_TYPES
from engines.local_models.languages import FAMILIES
from engines.local_models.scales import OUTPUT_SCALES
from engines.offline.breaker_world import FAILURES as BREAKER_FAILURES
from engines.offline.synthetic_world import SyntheticWorld

__all__ = [
    "CAPABILITIES",
    "HEURISTIC_FEATURES",
    "KIND_CAPABILITIES",
    "KIND_LABELS",
    "LOCAL_MODEL_KINDS",
    "REMOTE_KINDS",
    "SAMPLING_PARAMS",
    "ParamsError",
    "validate_params",
]

CAPABILITIES = ("chat", "translate", "quality", "difficulty", "embed")

KIND_LABELS = {
    "openai_chat": "OpenAI-compatible chat API",
    "heuristic": "Heuristic",
    "replay": "Replay (imported data)",
    "synthetic": "Synthetic (seed 000 §3.3)",
    "artificial_crowd": "Artificial crowd (translators × QE)",
    "breaker_editor": "Offline MT-breaker editor (simulation)",
    "fragile_mt": "Offline fragile translator (simulation)",
    "fragile_qe": "Offline fragile QE (simulation)",
    "openai_embeddings": "OpenAI-compatible embeddings API",
    "hashed_embeddings": "Offline hashed character n-gram embeddings",
    "lexical_world": "Offline lexical-selection world (simulation)",
    "local_translator": "Local MT model (Hugging Face seq2seq or CTranslate2, from a path)",
    "local_qe": "Local QE model (regression or COMET checkpoint, from a path)",
    "local_difficulty": "Local source-only difficulty regressor (from a path)",
    "local_embeddings": "Local sentence-transformers embeddings (from a path)",
}

KIND_CAPABILITIES: dict[str, tuple[str, ...]] = {
    "openai_chat": ("chat", "translate", "quality", "difficulty"),
    "heuristic": ("difficulty",),
    "replay": ("translate", "quality", "difficulty"),
    "synthetic": ("difficulty",),
    "artificial_crowd": ("difficulty",),
    "breaker_editor": ("chat",),
    "fragile_mt": ("translate",),
    "fragile_qe": ("quality",),
    "openai_embeddings": ("embed",),
    "hashed_embeddings": ("embed",),
    "lexical_world": ("chat",),
    "local_translator": ("translate",),
    "local_qe": ("quality",),
    "local_difficulty": ("difficulty",),
    "local_embeddings": ("embed",),
}

# Kinds whose calls leave the process: they get the response cache and the concurrency limit.
REMOTE_KINDS = frozenset({"openai_chat", "openai_embeddings"})

# Kinds that run a model from a local directory (the optional ``local`` install extra): they run
# on the ``local_models`` queue so a model loads once per worker process.
LOCAL_MODEL_KINDS = frozenset(
    {"local_translator", "local_qe", "local_difficulty", "local_embeddings"}
)
DEVICES = re.compile(r"^(cpu|auto|cuda|cuda:\d{1,2}|mps)$")
DTYPES = ("float32", "float16", "bfloat16")

HEURISTIC_FEATURES = ("tokens", "chars", "rarity", "syntax_depth")

# Request parameters forwarded to /v1/chat/completions (and therefore part of the cache key).
SAMPLING_PARAMS = ("temperature", "top_p", "max_tokens", "seed", "stop", "extra_body")


class ParamsError(ValueError):
    """Invalid parameters; ``messages`` lists every problem, each naming the parameter."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _names(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, str) and item.strip() for item in value)
        and len(set(value)) == len(value)
    )


def _check_openai(params: Mapping[str, Any], errors: list[str]) -> None:
    if "temperature" in params and not (
        _number(params["temperature"]) and 0 <= params["temperature"] <= 2
    ):
        errors.append("temperature must be a number from 0 to 2")
    if "top_p" in params and not (_number(params["top_p"]) and 0 < params["top_p"] <= 1):
        errors.append("top_p must be a number in (0, 1]")
    if "max_tokens" in params and not (_int(params["max_tokens"]) and params["max_tokens"] >= 1):
        errors.append("max_tokens must be a positive integer")
    if "seed" in params and not _int(params["seed"]):
        errors.append("seed must be an integer")
    if "stop" in params and not (
        isinstance(params["stop"], list) and all(isinstance(s, str) for s in params["stop"])
    ):
        errors.append("stop must be a list of strings")
    if "extra_body" in params and not isinstance(params["extra_body"], dict):
        errors.append("extra_body must be an object (fields added to the request body)")
    if "judge_with_target_language" in params and not isinstance(
        params["judge_with_target_language"], bool
    ):
        errors.append("judge_with_target_language must be true or false")
    if "max_parse_attempts" in params and not (
        _int(params["max_parse_attempts"]) and 1 <= params["max_parse_attempts"] <= 10
    ):
        errors.append("max_parse_attempts must be an integer from 1 to 10")


def _check_heuristic(params: Mapping[str, Any], errors: list[str]) -> None:
    feature = params.get("feature")
    if feature not in HEURISTIC_FEATURES:
        errors.append(f"feature is required and must be one of {', '.join(HEURISTIC_FEATURES)}")
    if "spacy_pipeline" in params and not (
        isinstance(params["spacy_pipeline"], str) and params["spacy_pipeline"].strip()
    ):
        errors.append("spacy_pipeline must be the name of an installed spaCy package")
    if "spacy_pipeline" in params and feature != "syntax_depth":
        errors.append("spacy_pipeline only applies to feature syntax_depth")


def _check_synthetic(params: Mapping[str, Any], errors: list[str]) -> None:
    if not (_int(params.get("n_topics")) and params["n_topics"] >= 1):
        errors.append("n_topics is required: a positive integer")
        return
    if "seed" in params and not (_int(params["seed"]) and params["seed"] >= 0):
        errors.append("seed must be a non-negative integer")
    if "noise_sd" in params and not _number(params["noise_sd"]):
        errors.append("noise_sd must be a number")
    for key in ("weights", "locs", "scales"):
        if key in params and not (
            isinstance(params[key], list) and params[key] and all(_number(v) for v in params[key])
        ):
            errors.append(f"{key} must be a non-empty list of numbers")
    if errors:
        return
    try:
        SyntheticWorld.from_params(params)
    except ValueError as exc:
        errors.append(str(exc))


def _check_replay(params: Mapping[str, Any], errors: list[str]) -> None:
    if "system" in params and not (isinstance(params["system"], str) and params["system"]):
        errors.append("system must be a non-empty system name")
    if "systems" in params and not _names(params["systems"]):
        errors.append("systems must be a non-empty list of distinct system names")


def _check_fragile_mt(params: Mapping[str, Any], errors: list[str]) -> None:
    fails = params.get("fails_on", list(BREAKER_FAILURES))
    if not (isinstance(fails, list) and all(f in BREAKER_FAILURES for f in fails)):
        errors.append(f"fails_on must be a list of: {', '.join(BREAKER_FAILURES)}")


def _check_openai_embeddings(params: Mapping[str, Any], errors: list[str]) -> None:
    if "batch_size" in params and not (
        _int(params["batch_size"]) and 1 <= params["batch_size"] <= 2048
    ):
        errors.append("batch_size must be an integer from 1 to 2048")
    if "dimensions" in params and not (_int(params["dimensions"]) and params["dimensions"] >= 1):
        errors.append("dimensions must be a positive integer")
    if "max_parse_attempts" in params and not (
        _int(params["max_parse_attempts"]) and 1 <= params["max_parse_attempts"] <= 10
    ):
        errors.append("max_parse_attempts must be an integer from 1 to 10")


def _check_hashed_embeddings(params: Mapping[str, Any], errors: list[str]) -> None:
    if "dim" in params and not (_int(params["dim"]) and 8 <= params["dim"] <= 4096):
        errors.append("dim must be an integer from 8 to 4096")
    if "ngram" in params and not (
        isinstance(params["ngram"], list)
        and len(params["ngram"]) == 2
        and all(_int(n) for n in params["ngram"])
        and 1 <= params["ngram"][0] <= params["ngram"][1] <= 8
    ):
        errors.append("ngram must be [min, max] with 1 <= min <= max <= 8")


def _check_lexical_world(params: Mapping[str, Any], errors: list[str]) -> None:
    if "skill" in params and not (_number(params["skill"]) and 0 <= params["skill"] <= 1):
        errors.append("skill must be a number from 0 to 1")
    if "rule_words" in params and not (
        _int(params["rule_words"]) and 1 <= params["rule_words"] <= 10
    ):
        errors.append("rule_words must be an integer from 1 to 10")


def _absolute_dir(value: Any) -> bool:
    """An absolute directory path a parameter may name (no NUL byte, at most 1,000 characters)."""
    return (
        isinstance(value, str) and value.startswith("/") and "\x00" not in value
        and len(value) <= 1000
    )  # fmt: skip


def _check_local_model(params: Mapping[str, Any], errors: list[str]) -> None:
    """What every local-model kind shares; the directory itself is inspected by the model's
    ``clean()`` (``engines.local_models.loading.model_dir_problems``), not here (no I/O)."""
    path = params.get("path")
    if not (isinstance(path, str) and path.strip()):
        errors.append("path is required: the absolute path of the model's directory")
    elif not _absolute_dir(path):
        errors.append("path must be an absolute directory path (starting with /)")
    device = params.get("device", "cpu")
    if not (isinstance(device, str) and DEVICES.match(device)):
        errors.append('device must be "cpu", "auto", "cuda", "cuda:N" or "mps"')
    if params.get("dtype", "float32") not in DTYPES:
        errors.append(f"dtype must be one of {', '.join(DTYPES)}")
    if "batch_size" in params and not (
        _int(params["batch_size"]) and 1 <= params["batch_size"] <= 1024
    ):
        errors.append("batch_size must be an integer from 1 to 1024")
    if "max_length" in params and not (
        _int(params["max_length"]) and 8 <= params["max_length"] <= 8192
    ):
        errors.append("max_length must be an integer from 8 to 8192 (input tokens)")


def _check_local_translator(params: Mapping[str, Any], errors: list[str]) -> None:
    _check_local_model(params, errors)
    if params.get("family", "auto") not in ("auto", *FAMILIES):
        errors.append(f"family must be auto or one of {', '.join(FAMILIES)}")
    codes = params.get("lang_codes", {})
    if not (
        isinstance(codes, dict)
        and all(isinstance(k, str) and k for k in codes)
        and all(isinstance(v, str) and v.strip() for v in codes.values())
    ):
        errors.append('lang_codes must map platform codes to model codes: {"en": "eng_Latn"}')
    if "num_beams" in params and not (_int(params["num_beams"]) and 1 <= params["num_beams"] <= 16):
        errors.append("num_beams must be an integer from 1 to 16")
    if "max_new_tokens" in params and not (
        _int(params["max_new_tokens"]) and 1 <= params["max_new_tokens"] <= 4096
    ):
        errors.append("max_new_tokens must be an integer from 1 to 4096")
    _check_ctranslate2(params, errors)


def _check_ctranslate2(params: Mapping[str, Any], errors: list[str]) -> None:
    backend = params.get("backend", "auto")
    if backend not in BACKENDS:
        errors.append(f"backend must be one of {', '.join(BACKENDS)}")
    if params.get("tokenizer_path") is not None and not _absolute_dir(params["tokenizer_path"]):
        errors.append("tokenizer_path must be an absolute directory path (starting with /)")
    if "compute_type" in params and params["compute_type"] not in COMPUTE_TYPES:
        errors.append(f"compute_type must be one of {', '.join(COMPUTE_TYPES)}")
    for key in ("tokenizer_path", "compute_type"):
        if key in params and backend == "transformers":
            errors.append(f"{key} only applies to a CTranslate2 model (backend ctranslate2/auto)")
    if params.get("device") == "mps" and backend == "ctranslate2":
        errors.append("device mps is not supported by CTranslate2 (cpu, auto or cuda[:N])")


def _check_template(params: Mapping[str, Any], errors: list[str], fields: tuple[str, ...]) -> None:
    template = params.get("input_template")
    if template is None:
        return
    if not (isinstance(template, str) and all("{" + f + "}" in template for f in fields)):
        wanted = " and ".join("{" + f + "}" for f in fields)
        errors.append(f"input_template must be a string containing {wanted}")
        return
    try:
        template.format(**{f: "" for f in fields})
    except (KeyError, IndexError, ValueError):
        errors.append(f"input_template may only use {', '.join('{' + f + '}' for f in fields)}")


def _check_local_regression(params: Mapping[str, Any], errors: list[str], fields: tuple) -> None:
    _check_local_model(params, errors)
    scale = params.get("output_scale")
    if scale not in OUTPUT_SCALES:
        errors.append(
            f"output_scale is required, one of {', '.join(OUTPUT_SCALES)}: how the model's raw "
            "output maps to 0–100 quality"
        )
    for key in ("slope", "intercept"):
        if key in params and not _number(params[key]):
            errors.append(f"{key} must be a finite number")
        if key in params and scale != "linear":
            errors.append(f"{key} only applies to output_scale linear")
    _check_template(params, errors, fields)


def _check_local_qe(params: Mapping[str, Any], errors: list[str]) -> None:
    _check_local_regression(params, errors, ("source", "translation"))
    if params.get("format", "auto") not in COMET_FORMATS:
        errors.append(f"format must be one of {', '.join(COMET_FORMATS)} (auto: from the files)")
    if params.get("encoder_path") is not None and not _absolute_dir(params["encoder_path"]):
        errors.append("encoder_path must be an absolute directory path (starting with /)")


def _check_local_difficulty(params: Mapping[str, Any], errors: list[str]) -> None:
    _check_local_regression(params, errors, ("source",))


def _check_local_embeddings(params: Mapping[str, Any], errors: list[str]) -> None:
    _check_local_model(params, errors)
    if "normalize" in params and not isinstance(params["normalize"], bool):
        errors.append("normalize must be true or false")


def _check_nothing(params: Mapping[str, Any], errors: list[str]) -> None:
    return


def _check_crowd(params: Mapping[str, Any], errors: list[str]) -> None:
    if not _names(params.get("translators")):
        errors.append("translators is required: a list of distinct translator engine names")
    if not _names(params.get("quality_estimators")):
        errors.append(
            "quality_estimators is required: a list of distinct quality-estimator engine names"
        )


_LOCAL_COMMON = {"path", "device", "dtype", "batch_size", "max_length"}
_ALLOWED = {
    "openai_chat": set(SAMPLING_PARAMS) | {"judge_with_target_language", "max_parse_attempts"},
    "heuristic": {"feature", "spacy_pipeline"},
    "synthetic": {"n_topics", "seed", "noise_sd", "weights", "locs", "scales"},
    "replay": {"system", "systems"},
    "artificial_crowd": {"translators", "quality_estimators"},
    "breaker_editor": set(),
    "fragile_mt": {"fails_on"},
    "fragile_qe": set(),
    "openai_embeddings": {"batch_size", "dimensions", "max_parse_attempts"},
    "hashed_embeddings": {"dim", "ngram"},
    "lexical_world": {"skill", "rule_words"},
    "local_translator": {
        *_LOCAL_COMMON,
        *("family", "lang_codes", "num_beams", "max_new_tokens"),
        *("backend", "tokenizer_path", "compute_type"),
    },
    "local_qe": {
        *_LOCAL_COMMON,
        *("output_scale", "slope", "intercept", "input_template", "format", "encoder_path"),
    },
    "local_difficulty": {*_LOCAL_COMMON, "output_scale", "slope", "intercept", "input_template"},
    "local_embeddings": {*_LOCAL_COMMON, "normalize"},
}
_CHECKS = {
    "openai_chat": _check_openai,
    "heuristic": _check_heuristic,
    "synthetic": _check_synthetic,
    "replay": _check_replay,
    "artificial_crowd": _check_crowd,
    "breaker_editor": _check_nothing,
    "fragile_mt": _check_fragile_mt,
    "fragile_qe": _check_nothing,
    "openai_embeddings": _check_openai_embeddings,
    "hashed_embeddings": _check_hashed_embeddings,
    "lexical_world": _check_lexical_world,
    "local_translator": _check_local_translator,
    "local_qe": _check_local_qe,
    "local_difficulty": _check_local_difficulty,
    "local_embeddings": _check_local_embeddings,
}


def validate_params(kind: str, params: Any) -> None:
    """Raise :class:`ParamsError` listing every problem with ``params`` for ``kind``."""
    if kind not in _CHECKS:
        raise ParamsError([f"unknown kind {kind!r}"])
    if not isinstance(params, dict):
        raise ParamsError(["parameters must be a JSON object"])
    errors = [
        f"unknown parameter {key!r} for kind {kind} (allowed: {', '.join(sorted(_ALLOWED[kind]))})"
        for key in sorted(set(params) - _ALLOWED[kind])
    ]
    _CHECKS[kind](params, errors)
    if errors:
        raise ParamsError(errors)
