"""The forward pass of COMET's reference-free models, rebuilt from a checkpoint (imports torch).

A faithful re-implementation of ``unbabel-comet`` 2.2.7 at inference (which cannot be installed
beside numpy 2 and transformers 5): the modules keep COMET's names so that the checkpoint's
``state_dict`` loads key for key —

* ``encoder.model``: ``XLMRobertaModel`` / ``XLMRobertaXLModel`` without pooler, built from the
  encoder's ``config.json`` (no pretrained weights);
* ``layerwise_attention``: ``scalar_parameters.N`` and ``gamma`` (comet/modules/
  layerwise_attention.py), softmax or sparsemax over the N = layers + 1 hidden states, with the
  masked per-sentence layer norm when ``layer_norm``;
* ``estimator.ff``: Linear, activation, Dropout per hidden size, then Linear to one output and
  the optional final activation (comet/modules/feedforward.py).

``referenceless_regression_metric`` encodes source and translation apart, pools each (avg, max,
cls or the encoder's first token) and feeds ``[mt, src, mt·src, |mt − src|]`` to the estimator;
``unified_metric`` encodes ``<s> mt </s></s> src </s>`` jointly and feeds the first token of the
mixed layers. The checkpoint is read with ``torch.load(weights_only=True)`` only.

``bench/comet_parity.py`` compares these scores with real COMET's on tiny checkpoints.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import torch
import transformers
from torch import nn

from engines.local_models.comet import TOKENIZER, encoder_dir
from engines.local_models.comet_hparams import (
    CHECKPOINT,
    REFERENCELESS,
    CometHparams,
    load_hparams_file,
    parse_hparams,
)

__all__ = ["CometLoadError", "CometQE", "build"]

# Keys a COMET checkpoint may hold that the score does not use: transformers < 4.31 saved the
# embeddings' position_ids buffer; a word-level UnifiedMetric has a tagging head.
_POSITION_IDS = "encoder.model.embeddings.position_ids"
_WORD_HEAD = ("hidden2tag.weight", "hidden2tag.bias")
_MAX_LISTED_KEYS = 8


class CometLoadError(Exception):
    """A checkpoint that cannot be loaded; the message says why (the loader makes it permanent)."""


class LayerwiseAttention(nn.Module):
    """COMET's scalar mix of the encoder's hidden states (inference only: no weight dropout)."""

    def __init__(self, num_layers: int, layer_norm: bool, transformation: str, buffers: bool):
        super().__init__()
        self.layer_norm = layer_norm
        self.transform: Any = torch.softmax
        if transformation == "sparsemax":
            from entmax import sparsemax

            self.transform = sparsemax
        self.scalar_parameters = nn.ParameterList(
            [nn.Parameter(torch.FloatTensor([0.0])) for _ in range(num_layers)]
        )
        self.gamma = nn.Parameter(torch.FloatTensor([1.0]))
        if buffers:  # COMET registers them when dropout > 0; they are in its state_dict
            self.register_buffer("dropout_mask", torch.zeros(num_layers))
            self.register_buffer("dropout_fill", torch.empty(num_layers).fill_(-1e20))

    def forward(self, tensors: tuple[Any, ...], mask: Any) -> Any:
        weights = torch.cat(list(self.scalar_parameters))
        normed_weights = torch.split(self.transform(weights, dim=0), split_size_or_sections=1)
        if not self.layer_norm:
            pieces = [
                weight * tensor for weight, tensor in zip(normed_weights, tensors, strict=True)
            ]
            return self.gamma * sum(pieces)
        mask_float = mask.float()
        broadcast_mask = mask_float.unsqueeze(-1)
        pieces = [
            weight * _masked_layer_norm(tensor, broadcast_mask, mask_float)
            for weight, tensor in zip(normed_weights, tensors, strict=True)
        ]
        return self.gamma * sum(pieces)


def _masked_layer_norm(tensor: Any, broadcast_mask: Any, mask: Any) -> Any:
    """COMET's per-sentence normalisation over the unmasked tokens (all hidden units together)."""
    tensor_masked = tensor * broadcast_mask
    batch_size, _, input_dim = tensor.size()
    num_elements_not_masked = mask.sum(1) * input_dim
    mean = tensor_masked.view(batch_size, -1).sum(1)
    mean = (mean / num_elements_not_masked).view(batch_size, 1, 1)
    variance = (((tensor_masked - mean) * broadcast_mask) ** 2).view(batch_size, -1).sum(
        1
    ) / num_elements_not_masked
    return (tensor - mean) / torch.sqrt(variance + 1e-12).view(batch_size, 1, 1)


class FeedForward(nn.Module):
    """COMET's estimator: the module list of comet/modules/feedforward.py, index for index."""

    def __init__(self, in_dim: int, hparams: CometHparams):
        super().__init__()
        sizes = hparams.hidden_sizes
        modules: list[nn.Module] = []
        for previous, size in zip((in_dim, *sizes[:-1]), sizes, strict=True):
            modules += [nn.Linear(previous, size), getattr(nn, hparams.activations)(), nn.Dropout()]
        modules.append(nn.Linear(sizes[-1], 1))
        if hparams.final_activation is not None:
            modules.append(getattr(nn, hparams.final_activation)())
        self.ff = nn.Sequential(*modules)

    def forward(self, features: Any) -> Any:
        return self.ff(features.to(self.ff[0].weight.dtype))


class _Encoder(nn.Module):
    """Holds the transformers model under COMET's key prefix ``encoder.model``."""

    def __init__(self, hparams: CometHparams, config: Any):
        super().__init__()
        model_class = (
            transformers.XLMRobertaXLModel
            if hparams.encoder_model == "XLM-RoBERTa-XL"
            else transformers.XLMRobertaModel
        )
        self.model = model_class(config, add_pooling_layer=False)


class CometQE(nn.Module):
    """A reference-free COMET model: ``score(sources, translations)`` gives its raw outputs."""

    def __init__(self, hparams: CometHparams, config: Any, tokenizer: Any):
        super().__init__()
        self.hparams = hparams
        self.tokenizer = tokenizer
        self.encoder = _Encoder(hparams, config)
        self.num_layers = int(config.num_hidden_layers) + 1
        # COMET's Encoder.max_positions; each segment is truncated to two tokens fewer.
        self.max_positions = int(config.max_position_embeddings) - 2
        if isinstance(hparams.layer, int) and hparams.layer >= self.num_layers:
            raise CometLoadError(
                f"hparams ask for encoder layer {hparams.layer}; the encoder has 0 to "
                f"{self.num_layers - 1}"
            )
        self.layerwise_attention = (
            LayerwiseAttention(
                self.num_layers,
                hparams.layer_norm,
                "softmax"
                if hparams.layer_transformation == "sparsemax_patch"
                else hparams.layer_transformation,
                hparams.dropout_buffers,
            )
            if hparams.layer == "mix"
            else None
        )
        width = int(config.hidden_size)
        in_dim = width * 4 if hparams.model_class == REFERENCELESS else width
        self.estimator = FeedForward(in_dim, hparams)

    # --- inputs ---------------------------------------------------------------------------

    def _device(self) -> Any:
        return self.estimator.ff[0].weight.device

    def _tokenize(self, texts: list[str], max_length: int | None) -> Any:
        limit = self.max_positions - 2
        if max_length is not None:
            limit = min(limit, max_length)
        return self.tokenizer(
            texts, return_tensors="pt", padding=True, truncation=True, max_length=limit
        )

    def _concat(self, mt: Any, src: Any) -> tuple[Any, Any]:
        """``Encoder.concat_sequences`` of COMET for (mt, src) with XLM-R's separator."""
        pad = self.tokenizer.pad_token_id
        cls, sep = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        special_tokens = 1 + 2 * 2  # [CLS] mt [SEP][SEP] src [SEP]: 2 inputs, separator size 2
        sequences = []
        for mt_ids, src_ids in zip(mt["input_ids"], src["input_ids"], strict=True):
            first = mt_ids.masked_select(mt_ids.ne(pad)).tolist()[1:-1]
            second = src_ids.masked_select(src_ids.ne(pad)).tolist()[1:-1]
            sequence = [cls, *first, sep, sep, *second, sep]
            if len(first) + len(second) > self.max_positions - special_tokens:
                sequence = sequence[: self.max_positions]
            sequences.append(sequence)
        lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)
        width = int(lengths.max())
        input_ids = torch.tensor([s + [pad] * (width - len(s)) for s in sequences])
        attention_mask = torch.arange(width)[None, :] < lengths[:, None]
        return input_ids, attention_mask

    # --- forward --------------------------------------------------------------------------

    def _mixed(self, input_ids: Any, attention_mask: Any) -> tuple[Any, Any]:
        output = self.encoder.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            output_hidden_states=True,
            return_dict=True,
        )
        layers = output.hidden_states
        if self.layerwise_attention is not None:
            return self.layerwise_attention(layers, attention_mask), output.last_hidden_state
        return layers[self.hparams.layer], output.last_hidden_state

    def _sentence_embedding(self, input_ids: Any, attention_mask: Any) -> Any:
        """``CometModel.compute_sentence_embedding`` without context."""
        embeddings, last = self._mixed(input_ids, attention_mask)
        pool = self.hparams.pool
        if pool == "default":
            return last[:, 0, :]
        if pool == "cls":
            return embeddings[:, 0, :]
        padding = input_ids.eq(self.tokenizer.pad_token_id).unsqueeze(-1)
        if pool == "max":
            filled = embeddings.float().masked_fill_(padding, float("-inf")).type_as(embeddings)
            return filled.max(dim=1)[0]
        filled = embeddings.float().masked_fill_(padding, 0.0).type_as(embeddings)
        total = attention_mask.unsqueeze(-1).expand(embeddings.size()).float().sum(1)
        return torch.sum(filled, 1) / total

    def score(
        self, sources: list[str], translations: list[str], max_length: int | None = None
    ) -> list[float]:
        """COMET's segment scores of (source, translation) pairs, in order."""
        device = self._device()
        src = self._tokenize(sources, max_length)
        mt = self._tokenize(translations, max_length)
        with torch.inference_mode():
            if self.hparams.model_class == REFERENCELESS:
                src_emb = self._sentence_embedding(
                    src["input_ids"].to(device), src["attention_mask"].to(device)
                )
                mt_emb = self._sentence_embedding(
                    mt["input_ids"].to(device), mt["attention_mask"].to(device)
                )
                features = torch.cat(
                    (mt_emb, src_emb, mt_emb * src_emb, torch.abs(mt_emb - src_emb)), dim=1
                )
            else:
                input_ids, attention_mask = self._concat(mt, src)
                embeddings, _last = self._mixed(input_ids.to(device), attention_mask.to(device))
                features = embeddings[:, 0, :]
            scores = self.estimator(features).view(-1)
        return [float(value) for value in scores.float().cpu().tolist()]


# --- loading ---------------------------------------------------------------------------------


def _torch_load(path: Path) -> Any:
    """Weights only, memory-mapped where the file allows it: a 2 GB checkpoint is then not held
    in memory beside the model its tensors are copied into."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except RuntimeError as exc:
        if "mmap" not in str(exc):  # a file saved in torch's legacy (pre-1.6) format
            raise
        return torch.load(path, map_location="cpu", weights_only=True)


def _read_checkpoint(path: Path) -> dict[str, Any]:
    try:
        checkpoint = _torch_load(path)
    except pickle.UnpicklingError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CometLoadError(
            f"{path} is not a weights-only checkpoint: torch.load(weights_only=True) refused it "
            f"({first_line}). It is not loaded as a full pickle, which can run code; re-save "
            "it as {'state_dict': ..., 'hyper_parameters': ...} of tensors and plain values"
        ) from None
    except (OSError, RuntimeError, EOFError, ValueError) as exc:
        raise CometLoadError(f"{path} cannot be read as a PyTorch checkpoint: {exc}") from None
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), dict):
        raise CometLoadError(f"{path} holds no state_dict (not a Lightning checkpoint)")
    if not all(isinstance(v, torch.Tensor) for v in checkpoint["state_dict"].values()):
        raise CometLoadError(f"{path}: state_dict holds something other than tensors")
    return checkpoint


def _hparams(directory: Path, checkpoint: dict[str, Any]) -> CometHparams:
    """As ``comet.load_from_checkpoint``: the class from hparams.yaml, the hyper-parameters the
    checkpoint carries (Lightning's ``hyper_parameters``) over those of the file."""
    fields = load_hparams_file(directory)
    stored = checkpoint.get("hyper_parameters")
    if isinstance(stored, dict) and isinstance(fields, dict):
        fields = {**fields, **stored}
    try:
        return parse_hparams(fields, source="hparams.yaml + the checkpoint's hyper_parameters")
    except ValueError as exc:
        raise CometLoadError(str(exc)) from None


def _tokenizer(encoder: Path) -> Any:
    """The encoder's ``tokenizer.json`` as saved, as COMET's transformers-4
    ``XLMRobertaTokenizerFast`` reads it (transformers 5's class would rebuild its pipeline from
    the vocabulary), with XLM-R's special tokens."""
    return transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(encoder / TOKENIZER),
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )


def _listed(keys: set[str]) -> str:
    shown = sorted(keys)[:_MAX_LISTED_KEYS]
    more = len(keys) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _load_weights(model: CometQE, state_dict: dict[str, Any], hparams: CometHparams) -> None:
    """Every weight from the checkpoint: a missing or an unknown key is an error naming it."""
    expected = set(model.state_dict())
    ignorable = {_POSITION_IDS} | (set(_WORD_HEAD) if hparams.word_level_training else set())
    state_dict = {k: v for k, v in state_dict.items() if k not in ignorable or k in expected}
    missing = expected - set(state_dict)
    unexpected = set(state_dict) - expected
    if missing or unexpected:
        problems = []
        if missing:
            problems.append(f"missing from the checkpoint: {_listed(missing)}")
        if unexpected:
            problems.append(f"not in a {hparams.model_class} model: {_listed(unexpected)}")
        raise CometLoadError(
            f"the checkpoint's state_dict does not match {hparams.model_class} with a "
            f"{hparams.encoder_model} encoder ({'; '.join(problems)})"
        )
    try:
        model.load_state_dict(state_dict, strict=True)
    except RuntimeError as exc:  # a shape that differs from the encoder's config
        raise CometLoadError(
            f"the checkpoint's weights do not fit the encoder config: {exc}"
        ) from None


def build(
    path: str, params: dict[str, Any], device: str, dtype: str
) -> tuple[CometQE, Any, int, str]:
    """The COMET model at ``path`` on ``device``: ``(model, tokenizer, parameters, family)``."""
    directory = Path(path)
    checkpoint = _read_checkpoint(directory / CHECKPOINT)
    hparams = _hparams(directory, checkpoint)
    try:
        encoder = encoder_dir(params, hparams)
    except ValueError as exc:
        raise CometLoadError(str(exc)) from None
    config_class = (
        transformers.XLMRobertaXLConfig
        if hparams.encoder_model == "XLM-RoBERTa-XL"
        else transformers.XLMRobertaConfig
    )
    config = config_class.from_pretrained(str(encoder), local_files_only=True)
    tokenizer = _tokenizer(encoder)
    model = CometQE(hparams, config, tokenizer)
    _load_weights(model, checkpoint["state_dict"], hparams)
    del checkpoint
    model.to(device=device, dtype=getattr(torch, dtype))
    model.eval()
    parameters = sum(p.numel() for p in model.parameters())
    family = "comet-referenceless" if hparams.model_class == REFERENCELESS else "comet-unified"
    return model, tokenizer, parameters, family
