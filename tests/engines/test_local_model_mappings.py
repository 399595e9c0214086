"""The pure halves of the local-model kinds: language codes per model family and the mapping
of a regression model's raw output to 0–100 quality (no torch needed)."""

from __future__ import annotations

import math

import pytest

from engines.kinds import ParamsError, validate_params
from engines.local_models.languages import LanguageCodeError, model_language_code
from engines.local_models.scales import to_quality


@pytest.mark.parametrize(
    ("code", "flores"),
    [
        ("en", "eng_Latn"),
        ("de", "deu_Latn"),
        ("cs", "ces_Latn"),
        ("zh", "zho_Hans"),
        ("zh-Hant", "zho_Hant"),
        ("ar", "arb_Arab"),
        ("fa", "pes_Arab"),
        ("lv", "lvs_Latn"),
        ("no", "nob_Latn"),
        ("ko", "kor_Hang"),
        ("uk", "ukr_Cyrl"),
        ("ja", "jpn_Jpan"),
        ("pt-BR", "por_Latn"),
        ("eng_Latn", "eng_Latn"),
    ],
)
def test_nllb_spells_languages_as_flores_200(code, flores):
    assert model_language_code("nllb", code) == flores


def test_m2m100_and_madlad_take_the_language_subtag_and_marian_takes_nothing():
    assert model_language_code("m2m100", "pt-BR") == "pt"
    assert model_language_code("madlad", "zh-Hant") == "zh"
    assert model_language_code("marian", "de") == ""
    assert model_language_code("plain", "de") == ""


def test_overrides_win_and_nonsense_is_refused():
    assert model_language_code("nllb", "sr", {"sr": "srp_Latn"}) == "srp_Latn"
    with pytest.raises(LanguageCodeError, match="not a BCP-47 language code"):
        model_language_code("nllb", "not a code!")
    with pytest.raises(LanguageCodeError, match="unknown model family"):
        model_language_code("opus", "en")


def test_each_scale_maps_to_0_100_as_documented():
    assert to_quality([0, 5, 25, 30, -1], "metricx", {}) == [100, 80, 0, 0, 100]
    assert to_quality([0.5, 1.2, -0.1], "unit", {}) == [50, 100, 0]
    assert to_quality([55, 120], "percent", {}) == [55, 100]
    assert to_quality([0, 2], "sigmoid", {}) == [50, pytest.approx(100 / (1 + math.exp(-2)))]
    assert to_quality([1, 10], "linear", {"slope": 20, "intercept": 10}) == [30, 100]


def test_a_non_finite_raw_score_is_refused():
    with pytest.raises(ValueError, match="not a finite number"):
        to_quality([1.0, float("nan")], "unit", {})


def test_sigmoid_keeps_the_ranking_of_unbounded_scores():
    raw = [-30.0, -2.0, 0.1, 3.0, 40.0]
    mapped = to_quality(raw, "sigmoid", {})
    assert mapped == sorted(mapped) and all(0 <= q <= 100 for q in mapped)


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [
        ("local_translator", {}, "path is required"),
        ("local_translator", {"path": "/m", "family": "opus"}, "family must be auto or one of"),
        ("local_translator", {"path": "/m", "lang_codes": {"en": 3}}, "lang_codes must map"),
        ("local_translator", {"path": "/m", "num_beams": 0}, "num_beams must be an integer"),
        ("local_qe", {"path": "/m"}, "output_scale is required"),
        ("local_qe", {"path": "/m", "output_scale": "unit", "slope": 2}, "only applies to"),
        ("local_qe", {"path": "/m", "output_scale": "unit", "input_template": "{source}"},
         "input_template must be a string containing {source} and {translation}"),
        ("local_difficulty", {"path": "/m", "output_scale": "unit", "input_template": "{x}"},
         "input_template must be a string containing {source}"),
        ("local_embeddings", {"path": "/m", "normalize": "yes"}, "normalize must be true or"),
        ("local_embeddings", {"path": "/m", "batch_size": 0}, "batch_size must be an integer"),
        ("local_embeddings", {"path": "/m", "colour": 1}, "unknown parameter 'colour'"),
    ],
)  # fmt: skip
def test_parameters_are_refused_with_their_names(kind, params, message):
    with pytest.raises(ParamsError) as caught:
        validate_params(kind, params)
    assert any(message in problem for problem in caught.value.messages), caught.value.messages
