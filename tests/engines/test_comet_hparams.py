"""hparams.yaml of COMET checkpoints: the layout, the class defaults, every refused field (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engines.local_models.comet_hparams import (
    MAX_HPARAMS_BYTES,
    is_comet_dir,
    parse_hparams,
    read_hparams,
)

KIWI = {"class_identifier": "unified_metric", "input_segments": ["mt", "src"]}
QE = {"class_identifier": "referenceless_regression_metric"}


def test_the_class_defaults_of_comet_2_2_7_fill_missing_fields():
    kiwi = parse_hparams({"class_identifier": "unified_metric"})
    assert (kiwi.layer, kiwi.pool, kiwi.layer_transformation) == ("mix", "cls", "sparsemax")
    assert kiwi.hidden_sizes == (3072, 1024) and kiwi.layer_norm is True
    assert kiwi.input_segments == ("mt", "src", "ref")  # used without a reference: QE mode
    qe = parse_hparams(QE)
    assert (qe.layer, qe.pool, qe.layer_transformation) == ("mix", "avg", "softmax")
    assert qe.hidden_sizes == (2048, 1024) and qe.activations == "Tanh"
    assert qe.final_activation is None and qe.dropout_buffers is True
    assert (qe.encoder_model, qe.pretrained_model) == ("XLM-RoBERTa", "xlm-roberta-large")


def test_the_fields_that_change_the_maths_are_read_and_the_training_ones_ignored():
    fields = {
        **QE,
        "layer": 3,
        "pool": "max",
        "layer_transformation": "sparsemax",
        "layer_norm": False,
        "dropout": 0.0,
        "hidden_sizes": [10, 8, 6],
        "activations": "sigmoid",  # COMET title-cases the name
        "final_activation": "Tanh",
        "encoder_model": "XLM-RoBERTa-XL",
        "learning_rate": 3e-5,
        "train_data": ["x.csv"],
        "nr_frozen_epochs": 0.3,
    }
    hparams = parse_hparams(fields)
    assert (hparams.layer, hparams.pool, hparams.layer_transformation) == (3, "max", "sparsemax")
    assert (hparams.layer_norm, hparams.dropout_buffers) == (False, False)
    assert hparams.hidden_sizes == (10, 8, 6)
    assert (hparams.activations, hparams.final_activation) == ("Sigmoid", "Tanh")
    assert hparams.encoder_model == "XLM-RoBERTa-XL"


def test_unified_metric_reads_sent_layer_and_always_pools_the_first_token():
    hparams = parse_hparams({**KIWI, "sent_layer": 2, "layer": "mix", "pool": "avg"})
    assert (hparams.layer, hparams.pool) == (2, "cls")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({**QE, "layer_norm": "yes"}, "layer_norm must be true or false (got 'yes')"),
        ({**QE, "layer": "last"}, 'layer must be "mix" or a layer number'),
        ({**QE, "layer": -1}, 'layer must be "mix" or a layer number'),
        ({**QE, "layer": True}, 'layer must be "mix" or a layer number'),
        ({**QE, "pool": "mean"}, "pool must be one of avg, max, cls, default"),
        ({**QE, "hidden_sizes": "3072,1024"}, "hidden_sizes must be a list of 1 to 16"),
        ({**QE, "hidden_sizes": []}, "hidden_sizes must be a list of 1 to 16"),
        ({**QE, "hidden_sizes": [3072, 1.5]}, "hidden_sizes must be a list of 1 to 16"),
        ({**QE, "activations": "ReLU"}, "activations must be an activation COMET builds"),
        ({**QE, "activations": "Linear"}, "activations must be an activation COMET builds"),
        ({**QE, "final_activation": 3}, "final_activation must be an activation"),
        ({**QE, "layer_transformation": "entmax15"}, "layer_transformation must be one of"),
        ({**QE, "dropout": "0.1"}, "dropout must be a number from 0 to 1"),
        (
            {**QE, "encoder_model": "BERT"},
            "encoder_model must be one of XLM-RoBERTa, XLM-RoBERTa-XL",
        ),
        ({**QE, "encoder_model": "MiniLM"}, "encoder_model must be one of"),
        ({**QE, "pretrained_model": ""}, "pretrained_model must be a non-empty string"),
        ({**KIWI, "input_segments": "mt,src"}, "input_segments must be a list of distinct"),
        ({**KIWI, "input_segments": ["mt", "src", "src"]}, "input_segments must be a list of"),
        ({**KIWI, "input_segments": ["mt", "ref"]}, "do not include both mt and src"),
        ({**KIWI, "word_level_training": 1}, "word_level_training must be true or false"),
        ({"class_identifier": "regression_metric"}, "regression, which needs a reference"),
        ({"class_identifier": "ranking_metric"}, "COMET ranking, which needs a reference"),
        ({"class_identifier": "xcomet_metric"}, "XCOMET, a different class"),
        ({"class_identifier": "my_metric"}, "class_identifier 'my_metric' is not a COMET class"),
        ({}, "class_identifier None is not a COMET class"),
        (["class_identifier"], "does not hold a mapping of field names"),
        ({1: "x"}, "does not hold a mapping of field names"),
    ],
)
def test_a_bad_field_is_refused_by_name(fields, message):
    with pytest.raises(ValueError) as caught:
        parse_hparams(fields)
    assert message in str(caught.value)
    assert str(caught.value).startswith("hparams.yaml")


def _comet_dir(tmp_path: Path, text: str) -> Path:
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model.ckpt").write_bytes(b"")
    (tmp_path / "hparams.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def test_the_layout_is_hparams_yaml_and_the_lightning_checkpoint(tmp_path):
    assert not is_comet_dir(tmp_path)
    (tmp_path / "hparams.yaml").write_text("class_identifier: unified_metric\n")
    assert not is_comet_dir(tmp_path)  # no checkpoints/model.ckpt
    _comet_dir(tmp_path, "class_identifier: unified_metric\n")
    assert is_comet_dir(tmp_path)
    assert read_hparams(tmp_path).model_class == "unified_metric"


def test_yaml_is_read_safely_and_size_limited(tmp_path):
    directory = _comet_dir(tmp_path, "!!python/object/apply:os.system ['true']\n")
    with pytest.raises(ValueError, match=r"hparams\.yaml is not valid YAML"):
        read_hparams(directory)
    (directory / "hparams.yaml").write_text("a: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        read_hparams(directory)
    (directory / "hparams.yaml").write_text("x" * (MAX_HPARAMS_BYTES + 1))
    with pytest.raises(ValueError, match=r"hparams\.yaml is larger than"):
        read_hparams(directory)
