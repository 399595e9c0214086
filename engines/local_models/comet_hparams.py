"""COMET checkpoint directories: recognise the layout and read ``hparams.yaml`` (pure, no torch).

A COMET model directory (as ``Unbabel/wmt22-cometkiwi-da`` ships) is::

    hparams.yaml               the model class and the hyper-parameters of its head
    checkpoints/model.ckpt     a PyTorch Lightning checkpoint: encoder + layerwise attention +
                               estimator weights in ``state_dict``

Only the reference-free classes are read, and of each only the hyper-parameters that change the
forward pass (COMET 2.2.7, ``comet/models``):

* ``referenceless_regression_metric`` (COMET-QE, e.g. wmt20/21-comet-qe-da): ``layer``, ``pool``,
  ``layer_transformation``, ``layer_norm``, ``dropout`` (whether the layerwise attention has its
  dropout buffers), ``hidden_sizes``, ``activations``, ``final_activation``;
* ``unified_metric`` (CometKiwi wmt22/23): the same with ``sent_layer`` instead of ``layer``
  (the sentence embedding is always the first token), plus ``input_segments`` and
  ``word_level_training`` (a word-level head that the score does not use).

Every field read is type-checked; the training-only fields (learning rates, data paths, ...) are
ignored. A missing field takes COMET's default for the class, as ``load_from_checkpoint`` does.
Reference-based classes and unknown classes, encoders other than XLM-R / XLM-R XL are refused
with a message naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "ACTIVATIONS",
    "CHECKPOINT",
    "ENCODER_MODEL_TYPES",
    "HPARAMS",
    "CometHparams",
    "is_comet_dir",
    "load_hparams_file",
    "parse_hparams",
    "read_hparams",
]

HPARAMS = "hparams.yaml"
CHECKPOINT = Path("checkpoints") / "model.ckpt"
MAX_HPARAMS_BYTES = 256 * 1024

REFERENCELESS = "referenceless_regression_metric"
UNIFIED = "unified_metric"
_REFERENCE_BASED = {
    "regression_metric": "COMET (DA) regression, which needs a reference",
    "ranking_metric": "COMET ranking, which needs a reference",
    "xcomet_metric": "XCOMET, a different class (word-level spans, reference-aware)",
}
# COMET encoder name -> the Hugging Face ``model_type`` values its config.json may carry.
ENCODER_MODEL_TYPES = {
    "XLM-RoBERTa": ("xlm-roberta", "roberta"),
    "XLM-RoBERTa-XL": ("xlm-roberta-xl",),
}
# FeedForward.build_activation: ``getattr(torch.nn, name.title())``. The names whose title-case
# is a torch.nn activation taking no argument (``ReLU`` is not one: "Relu" is no nn class).
ACTIVATIONS = (
    "Tanh",
    "Sigmoid",
    "Softplus",
    "Softsign",
    "Tanhshrink",
    "Hardtanh",
    "Hardsigmoid",
    "Hardswish",
    "Mish",
    "Identity",
)
POOLS = ("avg", "max", "cls", "default")
# ``sparsemax_patch`` is what COMET >= 2.2.4 reads as softmax (Unbabel/COMET issue #244).
TRANSFORMATIONS = ("softmax", "sparsemax", "sparsemax_patch")

# The class defaults of COMET 2.2.7 (ReferencelessRegression / UnifiedMetric __init__).
_DEFAULTS: dict[str, dict[str, Any]] = {
    REFERENCELESS: {
        "layer": "mix",
        "pool": "avg",
        "layer_transformation": "softmax",
        "hidden_sizes": [2048, 1024],
        "input_segments": ["mt", "src"],
    },
    UNIFIED: {
        "sent_layer": "mix",
        "pool": "cls",
        "layer_transformation": "sparsemax",
        "hidden_sizes": [3072, 1024],
        "input_segments": ["mt", "src", "ref"],
    },
}
_COMMON_DEFAULTS: dict[str, Any] = {
    "encoder_model": "XLM-RoBERTa",
    "pretrained_model": "xlm-roberta-large",
    "layer_norm": True,
    "dropout": 0.1,
    "activations": "Tanh",
    "final_activation": None,
    "word_level_training": False,
}


@dataclass(frozen=True)
class CometHparams:
    """What the forward pass of a reference-free COMET model depends on."""

    model_class: str
    encoder_model: str
    pretrained_model: str
    layer: str | int  # "mix" or an encoder layer (0 = embeddings)
    pool: str  # "cls" for unified_metric (its first token)
    layer_transformation: str  # softmax or sparsemax (sparsemax_patch read as softmax)
    layer_norm: bool
    dropout_buffers: bool
    hidden_sizes: tuple[int, ...]
    activations: str
    final_activation: str | None
    input_segments: tuple[str, ...]
    word_level_training: bool


def is_comet_dir(directory: Path) -> bool:
    """Whether ``directory`` has COMET's layout (``hparams.yaml`` + ``checkpoints/model.ckpt``)."""
    return (directory / HPARAMS).is_file() and (directory / CHECKPOINT).is_file()


def read_hparams(directory: Path) -> CometHparams:
    """The hyper-parameters of the COMET model in ``directory``; ValueError naming the problem."""
    return parse_hparams(load_hparams_file(directory))


def load_hparams_file(directory: Path) -> Any:
    """``hparams.yaml`` as loaded by ``yaml.safe_load`` (size-limited, no Python objects)."""
    path = directory / HPARAMS
    if path.stat().st_size > MAX_HPARAMS_BYTES:
        raise ValueError(f"{HPARAMS} is larger than {MAX_HPARAMS_BYTES} bytes")
    try:
        text = path.read_text(encoding="utf-8")
        loaded = yaml.safe_load(text)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{HPARAMS} is not valid YAML: {exc}") from None
    return loaded


def parse_hparams(loaded: Any, *, source: str = HPARAMS) -> CometHparams:
    """Validate a loaded ``hparams.yaml`` (or a checkpoint's ``hyper_parameters``)."""
    if not isinstance(loaded, Mapping) or not all(isinstance(k, str) for k in loaded):
        raise ValueError(f"{source} does not hold a mapping of field names")
    model_class = loaded.get("class_identifier")
    if model_class in _REFERENCE_BASED:
        raise ValueError(
            f"{source}: class_identifier {model_class} is {_REFERENCE_BASED[model_class]}; "
            f"local_qe reads the reference-free classes {REFERENCELESS} and {UNIFIED}"
        )
    if model_class not in _DEFAULTS:
        raise ValueError(
            f"{source}: class_identifier {model_class!r} is not a COMET class local_qe reads "
            f"(one of {REFERENCELESS}, {UNIFIED})"
        )
    fields = {**_COMMON_DEFAULTS, **_DEFAULTS[model_class], **loaded}
    field = _FieldReader(fields, source)
    layer_key = "layer" if model_class == REFERENCELESS else "sent_layer"
    segments = tuple(field.names("input_segments"))
    if model_class == UNIFIED and not {"mt", "src"} <= set(segments):
        raise ValueError(
            f"{source}: input_segments {list(segments)} do not include both mt and src: "
            "the model needs a reference, which quality estimation has not"
        )
    encoder = field.choice("encoder_model", tuple(ENCODER_MODEL_TYPES))
    return CometHparams(
        model_class=model_class,
        encoder_model=encoder,
        pretrained_model=field.text("pretrained_model"),
        layer=field.layer(layer_key),
        pool="cls" if model_class == UNIFIED else field.choice("pool", POOLS),
        layer_transformation=field.choice("layer_transformation", TRANSFORMATIONS),
        layer_norm=field.flag("layer_norm"),
        dropout_buffers=bool(field.number("dropout")),
        hidden_sizes=tuple(field.sizes("hidden_sizes")),
        activations=field.activation("activations"),
        final_activation=(
            None if fields["final_activation"] is None else field.activation("final_activation")
        ),
        input_segments=segments,
        word_level_training=field.flag("word_level_training"),
    )


class _FieldReader:
    """Typed access to the fields, each error naming the field and what it must be."""

    def __init__(self, fields: Mapping[str, Any], source: str) -> None:
        self.fields = fields
        self.source = source

    def _bad(self, key: str, wanted: str) -> ValueError:
        return ValueError(f"{self.source}: {key} must be {wanted} (got {self.fields[key]!r})")

    def text(self, key: str) -> str:
        value = self.fields[key]
        if not (isinstance(value, str) and value.strip() and len(value) <= 300):
            raise self._bad(key, "a non-empty string")
        return value

    def choice(self, key: str, options: tuple[str, ...]) -> str:
        value = self.fields[key]
        if value not in options or not isinstance(value, str):
            raise self._bad(key, f"one of {', '.join(options)}")
        return value

    def activation(self, key: str) -> str:
        value = self.fields[key]
        if not (isinstance(value, str) and value.title() in ACTIVATIONS):
            raise self._bad(key, f"an activation COMET builds ({', '.join(ACTIVATIONS)})")
        return value.title()

    def flag(self, key: str) -> bool:
        value = self.fields[key]
        if not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value

    def number(self, key: str) -> float:
        value = self.fields[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
            raise self._bad(key, "a number from 0 to 1")
        return float(value)

    def layer(self, key: str) -> str | int:
        value = self.fields[key]
        if value == "mix" or (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        ):
            return value  # type: ignore[no-any-return]
        raise self._bad(key, '"mix" or a layer number (0 or more)')

    def sizes(self, key: str) -> list[int]:
        value = self.fields[key]
        if not (
            isinstance(value, list)
            and 1 <= len(value) <= 16
            and all(
                isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 65536 for v in value
            )
        ):
            raise self._bad(key, "a list of 1 to 16 layer sizes (integers from 1 to 65536)")
        return value

    def names(self, key: str) -> list[str]:
        value = self.fields[key]
        if not (
            isinstance(value, list)
            and value
            and all(v in ("mt", "src", "ref") for v in value)
            and len(set(value)) == len(value)
        ):
            raise self._bad(key, "a list of distinct segment names among mt, src, ref")
        return value
