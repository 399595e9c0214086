"""Tiny COMET checkpoints in COMET's own layout, built at test time (nothing downloaded).

``build_comet`` writes what a user copies from the hub, at toy size::

    <directory>/hparams.yaml
    <directory>/checkpoints/model.ckpt     {"state_dict": ..., "hyper_parameters": ...}
    <directory>/encoder/config.json        a tiny XLM-R config
    <directory>/encoder/tokenizer.json     a Unigram tokenizer trained on a few sentences, with
    <directory>/encoder/tokenizer_config.json   XLM-R's special tokens and pair template

The state_dict's keys are written out here from COMET 2.2.7's module names (``encoder.model.*``
from a random ``XLMRobertaModel`` — or ``XLMRobertaXLModel`` for ``encoder_model:
XLM-RoBERTa-XL`` — without pooler, ``layerwise_attention.scalar_parameters.N``,
``layerwise_attention.gamma``, ``estimator.ff.N.*``), not taken from our reader, so a test that
loads them checks the reader against COMET's naming; ``bench/comet_parity.py`` loads the same
files with real COMET.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.engines.tiny_models import SENTENCES

REFERENCELESS = "referenceless_regression_metric"
UNIFIED = "unified_metric"
XLMR_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
CORPUS = [
    *SENTENCES,
    "Le comité a reporté sa décision au printemps.",
    "El gato se sentó en la alfombra.",
    "Výbor odložil své rozhodnutí na jaro.",
]


def _hparams(model_class: str, pretrained_model: str) -> dict[str, Any]:
    """The fields COMET writes for each class (the training ones kept, as a real file has)."""
    common: dict[str, Any] = {
        "class_identifier": model_class,
        "encoder_model": "XLM-RoBERTa",
        "pretrained_model": pretrained_model,
        "activations": "Tanh",
        "batch_size": 16,
        "dropout": 0.1,
        "encoder_learning_rate": 1.0e-06,
        "final_activation": None,
        "hidden_sizes": [12, 6],
        "keep_embeddings_frozen": True,
        "layer_norm": True,
        "layerwise_decay": 0.95,
        "learning_rate": 1.5e-05,
        "load_pretrained_weights": True,
        "local_files_only": False,
        "loss": "mse",
        "nr_frozen_epochs": 0.3,
        "optimizer": "AdamW",
        "train_data": ["data/train.csv"],
        "validation_data": ["data/dev.csv"],
        "warmup_steps": 0,
    }
    if model_class == UNIFIED:
        return {
            **common,
            "sent_layer": "mix",
            "layer_transformation": "sparsemax",
            "input_segments": ["mt", "src"],
            "word_layer": 2,
            "word_level_training": False,
            "loss_lambda": 0.65,
            "error_labels": ["minor", "major"],
            "cross_entropy_weights": None,
        }
    return {**common, "layer": "mix", "layer_transformation": "softmax", "pool": "avg"}


def build_encoder(
    directory: Path,
    hidden: int = 16,
    layers: int = 2,
    corpus=(),
    heads: int = 2,
    ffn: int = 0,
    xl: bool = False,
) -> Path:
    """A tiny XLM-R config and tokenizer (ids 0–3 are <s> <pad> </s> <unk>, as in XLM-R)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import XLMRobertaConfig, XLMRobertaXLConfig

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁")]
    )
    tokenizer.decoder = decoders.Metaspace(replacement="▁")
    trainer = trainers.UnigramTrainer(
        vocab_size=160 + len(corpus),
        special_tokens=XLMR_SPECIALS,
        unk_token="<unk>",
        show_progress=False,
    )
    tokenizer.train_from_iterator([*CORPUS, *corpus] * 3, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    tokenizer.save(str(directory / "tokenizer.json"))
    specials = dict(zip(["bos", "pad", "eos", "unk", "mask"], XLMR_SPECIALS, strict=True))
    tokenizer_config = {f"{name}_token": token for name, token in specials.items()}
    tokenizer_config.update(
        tokenizer_class="XLMRobertaTokenizer", cls_token="<s>", sep_token="</s>",
        model_max_length=128,
    )  # fmt: skip
    (directory / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    (XLMRobertaXLConfig if xl else XLMRobertaConfig)(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=ffn or hidden * 2,
        max_position_embeddings=130,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        layer_norm_eps=1e-5,
        initializer_range=0.3,  # not 0.02: the first token must depend on the input
    ).save_pretrained(directory)
    return directory


def _layerwise_attention(mixed: int, dropout: bool) -> dict[str, Any]:
    import torch

    state = {}
    for index in range(mixed):
        # Rising weights: sparsemax keeps the upper layers, whose first token depends on the
        # input (the embeddings layer's first token is the same for every sentence).
        weight = 0.5 * index / (mixed - 1) + 0.1 * torch.randn(1)
        state[f"layerwise_attention.scalar_parameters.{index}"] = weight
    state["layerwise_attention.gamma"] = 1.0 + 0.1 * torch.randn(1)
    if dropout:  # COMET registers these buffers when dropout > 0
        state["layerwise_attention.dropout_mask"] = torch.zeros(mixed)
        state["layerwise_attention.dropout_fill"] = torch.empty(mixed).fill_(-1e20)
    return state


def comet_state_dict(encoder: Path, hparams: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Random weights under COMET's module names for ``hparams``' class and head."""
    import torch
    from transformers import AutoConfig, XLMRobertaModel, XLMRobertaXLModel

    torch.manual_seed(seed)
    config = AutoConfig.from_pretrained(encoder)
    xl = hparams["encoder_model"] == "XLM-RoBERTa-XL"
    model = (XLMRobertaXLModel if xl else XLMRobertaModel)(config, add_pooling_layer=False)
    state = {f"encoder.model.{k}": v.clone() for k, v in model.state_dict().items()}
    mixed = config.num_hidden_layers + 1
    layer = hparams.get("layer", hparams.get("sent_layer", "mix"))
    if layer == "mix":
        state.update(_layerwise_attention(mixed, bool(hparams["dropout"])))
    width = config.hidden_size * (4 if hparams["class_identifier"] == REFERENCELESS else 1)
    sizes = [width, *hparams["hidden_sizes"], 1]
    for index, (size_in, size_out) in enumerate(itertools.pairwise(sizes)):
        # Linear, activation, Dropout per hidden size: the Linear layers are every third module.
        state[f"estimator.ff.{3 * index}.weight"] = torch.randn(size_out, size_in) / size_in**0.5
        state[f"estimator.ff.{3 * index}.bias"] = 0.1 * torch.randn(size_out)
    return state


def build_comet(
    directory: Path,
    model_class: str = UNIFIED,
    *,
    pretrained_model: str = "xlm-roberta-large",
    hparams: dict[str, Any] | None = None,
    edit_state: Callable[[dict[str, Any]], None] | None = None,
    hyper_parameters_in_checkpoint: bool = True,
    encoder_folder: str = "encoder",
    seed: int = 0,
    hidden: int = 16,
    layers: int = 2,
    corpus=(),
    heads: int = 2,
    ffn: int = 0,
) -> Path:
    """A COMET checkpoint directory of ``model_class``; ``hparams`` override the file's fields,
    ``edit_state`` changes the state_dict before it is saved (missing / extra keys, NaN)."""
    import torch

    directory.mkdir(parents=True, exist_ok=True)
    fields = {**_hparams(model_class, pretrained_model), **(hparams or {})}
    xl = fields["encoder_model"] == "XLM-RoBERTa-XL"
    encoder = build_encoder(directory / encoder_folder, hidden, layers, corpus, heads, ffn, xl)
    state = comet_state_dict(encoder, fields, seed)
    if edit_state is not None:
        edit_state(state)
    (directory / "hparams.yaml").write_text(yaml.safe_dump(fields), encoding="utf-8")
    # The bookkeeping a Lightning checkpoint carries (Lightning's loader needs the version).
    checkpoint: dict[str, Any] = {
        "state_dict": state,
        "pytorch-lightning_version": "2.2.1",
        "epoch": 1,
        "global_step": 1000,
    }
    if hyper_parameters_in_checkpoint:
        checkpoint["hyper_parameters"] = fields
    (directory / "checkpoints").mkdir(exist_ok=True)
    torch.save(checkpoint, directory / "checkpoints" / "model.ckpt")
    return directory


def rewrite_hparams(directory: Path, **fields: Any) -> Path:
    """Change fields of ``hparams.yaml`` only (what engine creation reads), e.g. to bad values."""
    path = directory / "hparams.yaml"
    path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), **fields}))
    return directory
