"""Local model directories: inspect them (no torch) and load them once per process.

Two halves:

* **Inspection** (``extra_problem``, ``model_dir_problems``, ``detect_family``, ``fingerprint``,
  ``bytes_on_disk``): reads file names, sizes and the JSON configs only, so the web process can
  validate an engine at creation (form, API, ``import_engines``) without importing PyTorch.
* **Loading** (``load``): the model, its tokenizer and the device, built on first use and kept in
  a per-process cache keyed by (kind, real path, device, dtype). A Celery worker of the
  ``local_models`` queue therefore loads each model once and answers every later batch with it;
  a forked worker child never inherits a parent's model (the key holds the process id).

Nothing here downloads: ``HF_HUB_OFFLINE`` is set before transformers is imported and every
``from_pretrained`` gets ``local_files_only=True``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.interfaces import EngineError
from engines.local_models import comet
from engines.local_models import ctranslate2_backend as ct2
from engines.local_models.files import read_json_object
from engines.local_models.languages import FAMILIES

__all__ = [
    "LoadedModel",
    "bytes_on_disk",
    "detect_family",
    "extra_problem",
    "fingerprint",
    "load",
    "loaded_models",
    "model_dir_problems",
    "offline",
]

# Python packages each kind needs (import names), all from the ``local`` install extra.
_NEEDS = {
    "local_translator": ("torch", "transformers"),
    "local_qe": ("torch", "transformers"),
    "local_difficulty": ("torch", "transformers"),
    "local_embeddings": ("torch", "transformers", "sentence_transformers"),
}
# A CTranslate2 translator needs no torch: transformers only for its tokenizer.
_NEEDS_CT2 = ("ctranslate2", "transformers")
_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")
_WEIGHTS_INDEX = ("pytorch_model.bin.index.json",)


def extra_problem(kind: str, ctranslate2: bool = False) -> str | None:
    """Why ``kind`` cannot run in this process (a package of the extra is missing), or None."""
    needs = _NEEDS_CT2 if ctranslate2 else _NEEDS[kind]
    missing = [name for name in needs if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"the local-model extra is not installed here (missing: {', '.join(missing)}); "
        "install it with: pip install torch==2.13.0 && pip install '.[local]'"
    )


def detect_family(directory: Path) -> str:
    """The translator family a model directory belongs to; ValueError when it cannot tell.

    NLLB and M2M-100 share ``model_type`` m2m_100 and differ by tokenizer; MADLAD is a plain T5,
    which its files cannot tell from any other T5, so it must be named.
    """
    config = read_json_object(directory / "config.json") or {}
    model_type = config.get("model_type")
    if model_type == "marian":
        return "marian"
    if model_type == "m2m_100":
        tokenizer = read_json_object(directory / "tokenizer_config.json") or {}
        tokenizer_class = str(tokenizer.get("tokenizer_class", ""))
        if tokenizer_class.lower().startswith("nllb"):
            return "nllb"
        if tokenizer_class.lower().startswith("m2m100"):
            return "m2m100"
    raise ValueError(
        f"family auto cannot tell the family of a {model_type or 'unknown'} model "
        f"from its files; set family to one of {', '.join(FAMILIES)}"
    )


def model_dir_problems(kind: str, params: Mapping[str, Any]) -> list[str]:
    """Everything that stops ``params.path`` from loading as ``kind``, read from the files."""
    use_ct2 = ct2.uses_ctranslate2(kind, params)
    problem = extra_problem(kind, use_ct2)
    if problem:
        return [problem]
    directory = Path(params["path"])
    try:
        if not directory.is_dir():
            return [f"path: {directory} is not a directory on this machine"]
        names = {entry.name for entry in directory.iterdir()}
    except OSError as exc:
        return [f"path: {directory} cannot be read ({exc.strerror or exc})"]
    if comet.is_comet(kind, params):  # hparams.yaml + checkpoints/model.ckpt (ADR 0034)
        return comet.comet_problems(params)
    problems = []
    try:
        if use_ct2:
            return ct2.dir_problems(directory, names, params)
        config = read_json_object(directory / "config.json")
        if kind == "local_embeddings":
            if config is None and "modules.json" not in names:
                problems.append(
                    f"path: {directory} holds no sentence-transformers model "
                    "(neither modules.json nor config.json)"
                )
            return problems
        if config is None:
            return [f"path: {directory} holds no config.json (not a Hugging Face model)"]
        if not names & set(_WEIGHTS + _WEIGHTS_INDEX):
            hint = (
                "; it holds a CTranslate2 model: use backend auto"
                if ct2.is_ctranslate2_dir(directory)
                else ""
            )
            problems.append(
                f"path: {directory} holds no weights ({' or '.join(_WEIGHTS[:2])}){hint}"
            )
        if kind == "local_translator":
            problems.extend(ct2.stray_params(params))
            if not config.get("is_encoder_decoder", False):
                problems.append("path: the model is not an encoder-decoder (seq2seq) model")
            if params.get("family", "auto") == "auto":
                detect_family(directory)
        else:
            labels = config.get("id2label") or {}
            outputs = int(config.get("num_labels", len(labels) or 2))
            if outputs != 1:
                problems.append(
                    f"path: the model has {outputs} outputs; a regression model has one "
                    "(num_labels 1)"
                )
    except (ValueError, OSError) as exc:
        problems.append(f"path: {exc}")
    return problems


def _files(directory: Path) -> list[tuple[str, int, int]]:
    out = []
    for root, _dirs, files in os.walk(directory):
        for name in files:
            path = Path(root) / name
            with contextlib.suppress(OSError):
                stat = path.stat()
                out.append((str(path.relative_to(directory)), stat.st_size, stat.st_mtime_ns))
    return sorted(out)


def bytes_on_disk(path: str) -> int | None:
    """Total size of the model directory's files; None when it cannot be read."""
    directory = Path(path)
    if not directory.is_dir():
        return None
    return sum(size for _name, size, _mtime in _files(directory))


def fingerprint(path: str) -> str:
    """Identity of the files at ``path``: names, sizes and modification times (no hashing of
    gigabytes of weights). Part of the response-cache key, so replacing the weights in place
    starts a fresh cache."""
    directory = Path(path)
    material = json.dumps([str(directory.resolve()), _files(directory)], separators=(",", ":"))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


# --- Loading -----------------------------------------------------------------------------------


@dataclass
class LoadedModel:
    """A model ready for inference in this process, with what the engine page shows."""

    kind: str
    path: str
    device: str
    dtype: str
    model: Any
    tokenizer: Any
    family: str
    parameters: int
    load_ms: float
    # "transformers" or "ctranslate2" (engines.local_models.ctranslate2_backend).
    backend: str = "transformers"
    # One batch at a time per model and process: the tokenizer's language state is shared.
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Engines that have recorded this load (engines.local_models.adapters): each engine's page
    # shows the processes holding its model, also when another engine loaded it first.
    recorded_for: set[tuple[Any, ...]] = field(default_factory=set)


_models: dict[tuple[int, str, str, str, str, str], LoadedModel] = {}
_loading = threading.Lock()


def loaded_models() -> list[LoadedModel]:
    """The models loaded in this process (for tests and the benchmark)."""
    pid = os.getpid()
    return [model for key, model in _models.items() if key[0] == pid]


def offline() -> None:
    """Keep the Hugging Face libraries off the network (and quiet); called before they are
    imported by any loader (torch's, CTranslate2's, COMET's)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def _torch() -> Any:
    offline()
    import torch

    return torch


def _device(torch: Any, wanted: str) -> str:
    if wanted == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if wanted.startswith("cuda") and not torch.cuda.is_available():
        raise EngineError(
            f"device {wanted} was asked for but CUDA is not available in this process "
            f"(torch {torch.__version__}); use device cpu or auto",
            permanent=True,
        )
    if wanted == "mps" and not torch.backends.mps.is_available():
        raise EngineError("device mps was asked for but is not available here", permanent=True)
    return wanted


def _build(kind: str, path: str, device: str, dtype: str, family: str) -> tuple[Any, Any, int]:
    torch = _torch()
    torch_dtype = getattr(torch, dtype)
    if kind == "local_embeddings":
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(path, device=device, local_files_only=True)
        if dtype != "float32":
            model = model.to(torch_dtype)
        model.eval()
        return model, None, sum(p.numel() for p in model.parameters())
    import transformers

    transformers.utils.logging.disable_progress_bar()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    auto = (
        transformers.AutoModelForSeq2SeqLM
        if kind == "local_translator"
        else transformers.AutoModelForSequenceClassification
    )
    if kind != "local_translator":
        # Checked from the config before the weights: a classifier would otherwise load (or
        # fail on its head's shape) and its first logit be read as a score.
        labels = transformers.AutoConfig.from_pretrained(path, local_files_only=True).num_labels
        if labels != 1:
            raise EngineError(
                f"the model at {path} has {labels} outputs; a regression model has one "
                "(num_labels 1)",
                permanent=True,
            )
    model = auto.from_pretrained(path, local_files_only=True, dtype=torch_dtype)
    model.to(device)
    model.eval()
    return model, tokenizer, int(model.num_parameters())


def load(kind: str, params: Mapping[str, Any]) -> tuple[LoadedModel, bool]:
    """The model of an engine's parameters, loaded at most once per process; ``(model, fresh)``
    where ``fresh`` says this call loaded it. Load failures are permanent engine errors."""
    use_ct2 = ct2.uses_ctranslate2(kind, params)
    problem = extra_problem(kind, use_ct2)
    if problem:
        raise EngineError(problem, permanent=True)
    path = str(Path(params["path"]).resolve())
    index = 0
    if use_ct2:
        device, index = ct2.device(str(params.get("device", "cpu")))
        # The compute type as the engine page shows it, e.g. "ct2:int8".
        dtype = "ct2:" + ct2.compute_type(params, device)
        if device == "cuda":
            device = f"cuda:{index}"
    else:
        dtype = str(params.get("dtype", "float32"))
        device = _device(_torch(), str(params.get("device", "cpu")))
    # A COMET checkpoint's encoder files may live elsewhere: another folder, another model.
    key = (os.getpid(), kind, path, str(params.get("encoder_path", "")), device, dtype)
    if key in _models:
        return _models[key], False
    with _loading:
        if key in _models:
            return _models[key], False
        family = ""
        if kind == "local_translator":
            family = str(params.get("family", "auto"))
            if family == "auto":
                try:
                    family = ct2.detect_family(params) if use_ct2 else detect_family(Path(path))
                except ValueError as exc:
                    raise EngineError(str(exc), permanent=True) from None
        start = time.perf_counter()
        try:
            if use_ct2:
                on = device.partition(":")[0]
                model, tokenizer, parameters = ct2.build(path, on, index, dtype[4:], params)
            elif comet.is_comet(kind, params):
                from engines.local_models import comet_model

                model, tokenizer, parameters, family = comet_model.build(
                    path, dict(params), device, dtype
                )
            else:
                model, tokenizer, parameters = _build(kind, path, device, dtype, family)
        except EngineError:
            raise
        except Exception as exc:  # any loader failure (missing file, bad weights, OOM) is final
            raise EngineError(
                f"cannot load the model at {path}: {type(exc).__name__}: {exc}", permanent=True
            ) from exc
        loaded = LoadedModel(
            kind=kind,
            path=path,
            device=device,
            # CTranslate2 resolves "auto"/"default" to the compute type it runs: shown as such.
            dtype=f"ct2:{model.translator.compute_type}" if use_ct2 else dtype,
            model=model,
            tokenizer=tokenizer,
            family=family,
            parameters=parameters,
            load_ms=(time.perf_counter() - start) * 1000.0,
            backend="ctranslate2" if use_ct2 else "transformers",
        )
        _models[key] = loaded
        return loaded, True
