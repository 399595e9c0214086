"""COMET checkpoints as ``local_qe``: which layout a directory has, and what stops it loading.

No torch here (the web process validates engines with it); the model itself is built by
``engines.local_models.comet_model`` on first use in a worker.

A COMET checkpoint names its encoder only by its hub name (``pretrained_model:
xlm-roberta-large``). The encoder's ``config.json`` and tokenizer must therefore be on disk: in
the engine's ``encoder_path``, or by default in the model directory's ``encoder/`` folder, or in
a folder named like the hub name's last part (``<path>/xlm-roberta-large/``). Its weights are not
needed: every weight comes from the checkpoint.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engines.local_models.comet_hparams import (
    CHECKPOINT,
    ENCODER_MODEL_TYPES,
    CometHparams,
    is_comet_dir,
    read_hparams,
)
from engines.local_models.files import read_json_object

__all__ = ["FORMATS", "TOKENIZER", "comet_problems", "encoder_dir", "is_comet", "layout"]

FORMATS = ("auto", "huggingface", "comet")
# What the encoder folder must hold besides config.json: the fast tokenizer's file, read as saved
# (as COMET's transformers-4 XLMRobertaTokenizerFast reads it). A SentencePiece model alone is
# not enough: its conversion by transformers 5 is not what COMET ran, and is not checked.
TOKENIZER = "tokenizer.json"


def layout(params: Mapping[str, Any]) -> str:
    """``comet`` or ``huggingface``: the engine's ``format``, or what its directory holds."""
    wanted = str(params.get("format", "auto"))
    if wanted != "auto":
        return wanted
    return "comet" if is_comet_dir(Path(params["path"])) else "huggingface"


def is_comet(kind: str, params: Mapping[str, Any]) -> bool:
    """Whether an engine of ``kind`` reads a COMET checkpoint."""
    return kind == "local_qe" and layout(params) == "comet"


def encoder_dir(params: Mapping[str, Any], hparams: CometHparams) -> Path:
    """Where the encoder's config and tokenizer are; ValueError saying where it looked."""
    if params.get("encoder_path"):
        candidates = [Path(params["encoder_path"])]
    else:
        directory = Path(params["path"])
        candidates = [directory / "encoder", directory / Path(hparams.pretrained_model).name]
    for candidate in candidates:
        if (candidate / "config.json").is_file():
            return candidate
    looked = " or ".join(str(c / "config.json") for c in candidates)
    raise ValueError(
        f"encoder_path: no encoder config found ({looked}); the checkpoint's encoder is "
        f"{hparams.pretrained_model}: put its config.json and {TOKENIZER} in "
        "<path>/encoder/ or set encoder_path"
    )


def _encoder_problems(encoder: Path, hparams: CometHparams) -> list[str]:
    problems = []
    if not (encoder / TOKENIZER).is_file():
        problems.append(
            f"encoder_path: {encoder} holds no {TOKENIZER} (the encoder's fast tokenizer; "
            f"a SentencePiece model alone is not read)"
        )
    config = read_json_object(encoder / "config.json") or {}
    model_type = config.get("model_type")
    allowed = ENCODER_MODEL_TYPES[hparams.encoder_model]
    if model_type not in allowed:
        problems.append(
            f"encoder_path: {encoder}/config.json is a {model_type!r} model; the checkpoint's "
            f"encoder_model {hparams.encoder_model} needs model_type {' or '.join(allowed)}"
        )
    layers = config.get("num_hidden_layers")
    if isinstance(hparams.layer, int) and isinstance(layers, int) and hparams.layer > layers:
        problems.append(
            f"path: hparams.yaml asks for encoder layer {hparams.layer}; the encoder has "
            f"layers 0 to {layers}"
        )
    return problems


def comet_problems(params: Mapping[str, Any]) -> list[str]:
    """Everything that stops ``params.path`` from loading as a COMET QE model (no torch)."""
    directory = Path(params["path"])
    if not (directory / CHECKPOINT).is_file():
        return [f"path: {directory} holds no {CHECKPOINT} (COMET's checkpoint)"]
    problems = []
    if params.get("input_template"):
        problems.append(
            "input_template does not apply to a COMET checkpoint (COMET builds its input)"
        )
    try:
        hparams = read_hparams(directory)
    except FileNotFoundError:
        return [*problems, f"path: {directory} holds no hparams.yaml (COMET's hyper-parameters)"]
    except (ValueError, OSError) as exc:
        return [*problems, f"path: {exc}"]
    if hparams.layer_transformation == "sparsemax" and importlib.util.find_spec("entmax") is None:
        problems.append(
            "path: the model mixes its layers with sparsemax, which needs the entmax package "
            "(part of the local extra: pip install '.[local]')"
        )
    try:
        problems.extend(_encoder_problems(encoder_dir(params, hparams), hparams))
    except (ValueError, OSError) as exc:
        problems.append(str(exc))
    return problems
