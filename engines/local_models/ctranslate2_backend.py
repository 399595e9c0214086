"""CTranslate2 translation models from a local directory (``local_translator``, backend
``ctranslate2``).

A CTranslate2 directory is what ``ct2-transformers-converter`` writes: ``model.bin``, its own
``config.json`` (no ``model_type``: that is how it differs from a Hugging Face directory) and the
vocabulary files, plus whatever ``--copy_files`` copied. CTranslate2 translates *tokens*, so the
Hugging Face tokenizer comes from the same directory (copied there by the converter) or from
``tokenizer_path`` (e.g. the original Hugging Face directory).

Like ``loading``, the inspection half reads file names and JSON only: ``Engine.clean()`` calls it
in the web process without importing ctranslate2 or transformers. The loading and translation
half imports them on first use.

The parameters mean what they mean on the transformers backend: ``device`` (``cpu`` default,
``auto``, ``cuda[:N]``; CTranslate2 has no ``mps``), ``dtype`` → compute type by the identity
mapping (``float32``, ``float16``, ``bfloat16``) unless ``compute_type`` names one of
CTranslate2's (``int8`` is the usual choice on CPU), ``num_beams`` → ``beam_size`` (1, greedy, by
default), ``max_new_tokens`` → ``max_decoding_length``, ``max_length`` truncates the input tokens.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from engines.interfaces import EngineError
from engines.local_models.files import read_json_object

__all__ = [
    "BACKENDS",
    "COMPUTE_TYPES",
    "Ct2Model",
    "build",
    "compute_type",
    "detect_family",
    "device",
    "dir_problems",
    "is_ctranslate2_dir",
    "stray_params",
    "translate",
    "uses_ctranslate2",
]

BACKENDS = ("auto", "transformers", "ctranslate2")
# CTranslate2's compute types (https://opennmt.net/CTranslate2/quantization.html); which ones a
# device supports is asked of ctranslate2 at load time.
COMPUTE_TYPES = (
    "default",
    "auto",
    "int8",
    "int8_float32",
    "int8_float16",
    "int8_bfloat16",
    "int16",
    "float16",
    "bfloat16",
    "float32",
)
_VOCABULARIES = (
    ("shared_vocabulary.json",),
    ("shared_vocabulary.txt",),
    ("source_vocabulary.json", "target_vocabulary.json"),
    ("source_vocabulary.txt", "target_vocabulary.txt"),
)
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
_TOKENIZER_CLASSES = (("nllb", "nllb"), ("m2m100", "m2m100"), ("marian", "marian"))
_COPY_HINT = (
    "convert it with ct2-transformers-converter --copy_files tokenizer.json "
    "tokenizer_config.json (and the sentencepiece files the tokenizer names), or set "
    "tokenizer_path to the original Hugging Face directory"
)


def is_ctranslate2_dir(directory: Path) -> bool:
    """Whether ``directory`` holds a CTranslate2 model: ``model.bin`` and a ``config.json`` that
    is not a Hugging Face one (every Hugging Face config names its ``model_type``)."""
    try:
        if not (directory / "model.bin").is_file():
            return False
        config = read_json_object(directory / "config.json")
    except (OSError, ValueError):
        return False
    return config is None or "model_type" not in config


def uses_ctranslate2(kind: str, params: Mapping[str, Any]) -> bool:
    """Whether an engine of ``kind`` runs CTranslate2: a ``local_translator`` whose ``backend``
    says so, or is ``auto`` and names a CTranslate2 directory."""
    if kind != "local_translator":
        return False
    backend = params.get("backend", "auto")
    if backend != "auto":
        return bool(backend == "ctranslate2")
    path = params.get("path")
    return isinstance(path, str) and is_ctranslate2_dir(Path(path))


def _tokenizer_dir(params: Mapping[str, Any]) -> Path:
    return Path(params.get("tokenizer_path") or params["path"])


def detect_family(params: Mapping[str, Any]) -> str:
    """The family of a CTranslate2 model, read from its tokenizer's files: the Hugging Face
    ``config.json`` of ``tokenizer_path`` when it is the original directory, else the tokenizer
    class of ``tokenizer_config.json``. ValueError when neither tells."""
    from engines.local_models.loading import detect_family as detect_hf_family

    directory = _tokenizer_dir(params)
    config = read_json_object(directory / "config.json") or {}
    if "model_type" in config:
        return detect_hf_family(directory)
    tokenizer = read_json_object(directory / "tokenizer_config.json") or {}
    tokenizer_class = str(tokenizer.get("tokenizer_class", "")).lower()
    for prefix, family in _TOKENIZER_CLASSES:
        if tokenizer_class.startswith(prefix):
            return family
    raise ValueError(
        "family auto cannot tell the family of a CTranslate2 model whose tokenizer class is "
        f"{tokenizer.get('tokenizer_class') or 'not named'}; set family to one of "
        "nllb, m2m100, madlad, marian, plain"
    )


def dir_problems(directory: Path, names: set[str], params: Mapping[str, Any]) -> list[str]:
    """Everything that stops a CTranslate2 directory from loading, from its files alone."""
    if "model.bin" not in names:
        return [
            f"path: {directory} holds no CTranslate2 model (model.bin); convert a Hugging Face "
            "model with ct2-transformers-converter, or use backend transformers"
        ]
    problems = []
    if not any(all(name in names for name in group) for group in _VOCABULARIES):
        problems.append(f"path: {directory} holds no CTranslate2 vocabulary (shared_vocabulary)")
    tokenizer_dir = _tokenizer_dir(params)
    try:
        tokenizer_names = {entry.name for entry in tokenizer_dir.iterdir()}
    except OSError as exc:
        return [*problems, f"tokenizer_path: {tokenizer_dir} cannot be read ({exc.strerror})"]
    if not tokenizer_names & set(_TOKENIZER_FILES):
        field = "tokenizer_path" if params.get("tokenizer_path") else "path"
        problems.append(
            f"{field}: {tokenizer_dir} holds no Hugging Face tokenizer "
            f"({' or '.join(_TOKENIZER_FILES)}); {_COPY_HINT}"
        )
    elif params.get("family", "auto") == "auto":
        try:
            detect_family(params)
        except ValueError as exc:
            problems.append(f"path: {exc}")
    return problems


def stray_params(params: Mapping[str, Any]) -> list[str]:
    """CTranslate2-only parameters on an engine that runs transformers (``backend`` auto found a
    Hugging Face directory): refused rather than silently ignored."""
    return [
        f"{key}: only a CTranslate2 model takes it, and {params['path']} is a Hugging Face one"
        for key in ("tokenizer_path", "compute_type")
        if key in params
    ]


# --- Loading and translating (imports ctranslate2 and transformers) -----------------------------


@dataclass
class Ct2Model:
    """A loaded ``ctranslate2.Translator`` and what decoding needs to match transformers."""

    translator: Any
    # The model's generation config forces the end token as the last of ``max_new_tokens``
    # (Marian's does): transformers then generates one token fewer of text, and so do we.
    forced_eos: bool
    # The position table's length: CTranslate2 refuses a longer input where transformers'
    # M2M-100 extends its sinusoidal table, so inputs and outputs are truncated to it.
    positions: int | None = None


def device(wanted: str) -> tuple[str, int]:
    """CTranslate2's (device, device index) for the ``device`` parameter."""
    import ctranslate2

    cuda = ctranslate2.get_cuda_device_count()
    if wanted == "auto":
        return ("cuda", 0) if cuda else ("cpu", 0)
    if wanted == "cpu":
        return "cpu", 0
    if wanted.startswith("cuda"):
        index = int(wanted.partition(":")[2] or 0)
        if index >= cuda:
            raise EngineError(
                f"device {wanted} was asked for but CTranslate2 sees {cuda} CUDA device(s) "
                "here; use device cpu or auto",
                permanent=True,
            )
        return "cuda", index
    raise EngineError(
        f"device {wanted} is not supported by CTranslate2 (cpu, auto or cuda[:N])", permanent=True
    )


def compute_type(params: Mapping[str, Any], on: str) -> str:
    """The compute type: ``compute_type`` if set, else ``dtype`` (same names); refused with the
    device's supported list when the device cannot run it (float16 on most CPUs)."""
    import ctranslate2

    wanted = str(params.get("compute_type") or params.get("dtype", "float32"))
    supported = sorted(ctranslate2.get_supported_compute_types(on))
    if wanted not in ("default", "auto") and wanted not in supported:
        raise EngineError(
            f"compute type {wanted} is not supported by CTranslate2 on {on} here "
            f"(supported: {', '.join(supported)}); set dtype or compute_type",
            permanent=True,
        )
    return wanted


def _skip_string(handle: BinaryIO) -> None:
    (length,) = struct.unpack("<H", handle.read(2))
    handle.seek(length, os.SEEK_CUR)


def read_model_bin(model_bin: Path) -> tuple[int, int | None]:
    """``(weights, positions)`` of a ``model.bin`` (CTranslate2's format: a header per variable,
    then its bytes), read from the headers, skipping the data: the number of weights,
    quantization scales left out, and the length of its position table (None when the model
    has none, e.g. relative positions)."""
    total = 0
    positions = None
    with model_bin.open("rb") as handle:
        handle.read(4)  # binary version
        _skip_string(handle)  # spec name
        handle.read(4)  # spec revision
        (count,) = struct.unpack("<I", handle.read(4))
        for _ in range(count):
            (length,) = struct.unpack("<H", handle.read(2))
            name = handle.read(length).rstrip(b"\x00").decode("utf-8", "replace")
            (rank,) = struct.unpack("<B", handle.read(1))
            shape = struct.unpack(f"<{rank}I", handle.read(4 * rank))
            handle.read(1)  # dtype
            (size,) = struct.unpack("<I", handle.read(4))
            handle.seek(size, os.SEEK_CUR)
            if not name.endswith("scale"):
                total += math.prod(shape)
            # The encoder's table is often an alias of the decoder's: the shortest is the limit.
            if name.endswith("position_encodings/encodings") and shape:
                positions = min(shape[0], positions or shape[0])
    return total, positions


def count_parameters(model_bin: Path) -> int:
    """The number of weights in a ``model.bin`` (``read_model_bin``)."""
    return read_model_bin(model_bin)[0]


def _forced_eos(params: Mapping[str, Any]) -> bool:
    """Whether the model's generation settings force the end token: its
    ``generation_config.json`` (copied, or in ``tokenizer_path``), else the Hugging Face
    ``config.json`` of ``tokenizer_path`` (older checkpoints keep generation settings there)."""
    directories = (Path(params["path"]), _tokenizer_dir(params))
    for directory in directories:
        config = read_json_object(directory / "generation_config.json")
        if config is not None:
            return config.get("forced_eos_token_id") is not None
    config = read_json_object(directories[1] / "config.json") or {}
    return "model_type" in config and config.get("forced_eos_token_id") is not None


def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def build(path: str, on: str, index: int, compute: str, params: Mapping[str, Any]) -> Any:
    """``(Ct2Model, tokenizer, parameters)`` for a CTranslate2 directory."""
    from engines.local_models.loading import offline

    offline()
    import ctranslate2
    import transformers

    transformers.utils.logging.disable_progress_bar()
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        str(_tokenizer_dir(params)), local_files_only=True
    )
    # One batch at a time per model and process (the adapter's lock), so one translator
    # replica; on CPU it uses every core this process may run on, as torch does.
    translator = ctranslate2.Translator(
        path,
        device=on,
        device_index=index,
        compute_type=compute,
        inter_threads=1,
        intra_threads=_threads() if on == "cpu" else 0,
    )
    weights, positions = read_model_bin(Path(path) / "model.bin")
    model = Ct2Model(translator=translator, forced_eos=_forced_eos(params), positions=positions)
    return model, tokenizer, weights


def translate(
    loaded: Any,
    texts: list[str],
    target_token: str | None,
    *,
    beams: int,
    max_new_tokens: int,
    max_length: int,
) -> list[str]:
    """Translate one batch. The tokenizer's language state (``src_lang``) is already set, so the
    source tokens carry NLLB's / M2M-100's language token; the target language token, if the
    family has one, is the target prefix (transformers' ``forced_bos_token_id``)."""
    tokenizer = loaded.tokenizer
    model: Ct2Model = loaded.model
    if model.positions:
        max_length = min(max_length, model.positions)
        max_new_tokens = min(max_new_tokens, model.positions)
    ids = tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    sources = [tokenizer.convert_ids_to_tokens(row) for row in ids]
    prefix = [[target_token] for _ in texts] if target_token else None
    results = model.translator.translate_batch(
        sources,
        target_prefix=prefix,
        beam_size=beams,
        max_batch_size=0,
        max_decoding_length=max(1, max_new_tokens - (1 if model.forced_eos else 0)),
        return_scores=False,
    )
    out = []
    for result in results:
        tokens = result.hypotheses[0]
        text = tokenizer.decode(tokenizer.convert_tokens_to_ids(tokens), skip_special_tokens=True)
        out.append(text.strip())
    return out
