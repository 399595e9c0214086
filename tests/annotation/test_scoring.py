"""MQM scores against hand-computed examples (pure module, no database)."""

import itertools

import pytest

from annotation.scoring import (
    DEFAULT_WEIGHTS,
    MQM_TYPOLOGY,
    MqmWeights,
    mqm_score,
    mqm_score_100,
    mqm_to_100,
    span_penalty,
    typology_choices,
    validate_span,
)


def span(category, severity, subcategory=""):
    return {"category": category, "subcategory": subcategory, "severity": severity}


def test_no_error_is_zero_penalty_and_100():
    assert mqm_score([]) == 0.0
    assert mqm_score_100([]) == 100.0


def test_standard_weights_hand_computed():
    # 1 major (5) + 2 minor (1 + 1) + 3 minor punctuation (0.1 · 3) = 7.3
    spans = [
        span("Accuracy", "major", "Mistranslation"),
        span("Fluency", "minor", "Grammar"),
        span("Style", "minor", "Unnatural or awkward"),
        span("Fluency", "minor", "Punctuation"),
        span("Fluency", "minor", "Punctuation"),
        span("Fluency", "minor", "Punctuation"),
    ]
    assert mqm_score(spans) == 7.3
    # 100 − 4 · 7.3 = 70.8
    assert mqm_score_100(spans) == 70.8


def test_major_punctuation_is_not_discounted():
    assert span_penalty(span("Fluency", "major", "Punctuation")) == 5.0


def test_non_translation_costs_25_whatever_the_severity():
    assert span_penalty(span("Non-translation", "minor")) == 25.0
    assert span_penalty(span("Non-translation", "major")) == 25.0
    assert mqm_score_100([span("Non-translation", "major")]) == 0.0


def test_google_combined_labels_are_understood():
    assert span_penalty({"category": "Fluency/Punctuation", "severity": "Minor"}) == 0.1
    assert span_penalty({"category": "Non-translation!", "severity": "Major"}) == 25.0


def test_critical_default_weight():
    assert span_penalty(span("Accuracy", "critical", "Omission")) == 10.0


def test_weights_are_configurable():
    weights = MqmWeights.from_dict({"major": 10, "minor_punctuation": 0.5})
    spans = [span("Accuracy", "major", "Addition"), span("Fluency", "minor", "Punctuation")]
    assert mqm_score(spans, weights) == 10.5
    assert weights.to_dict() == {
        "minor": 1.0,
        "major": 10.0,
        "critical": 10.0,
        "minor_punctuation": 0.5,
        "non_translation": 25.0,
    }
    assert MqmWeights.from_dict(None) == DEFAULT_WEIGHTS


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"majr": 5}, "unknown MQM weight"),
        ({"major": -1}, ">= 0"),
        ({"major": "5"}, "must be a number"),
        ({"major": True}, "must be a number"),
    ],
)
def test_bad_weights_are_rejected(data, message):
    with pytest.raises(ValueError, match=message):
        MqmWeights.from_dict(data)


@pytest.mark.parametrize(
    ("score", "expected"),
    [(0, 100.0), (0.1, 99.6), (1, 96.0), (5, 80.0), (12.5, 50.0), (25, 0.0), (40, 0.0)],
)
def test_mapping_to_100(score, expected):
    assert mqm_to_100(score) == expected


def test_mapping_is_monotone_and_clipped():
    values = [mqm_to_100(s / 10) for s in range(0, 400)]
    assert all(a >= b for a, b in itertools.pairwise(values))
    assert min(values) == 0.0 and max(values) == 100.0
    with pytest.raises(ValueError):
        mqm_to_100(-1)


def test_unknown_severity_is_an_error():
    with pytest.raises(ValueError, match="severity"):
        span_penalty(span("Accuracy", "catastrophic", "Omission"))


def test_validate_span():
    validate_span(span("Accuracy", "major", "Creative Reinterpretation"))
    validate_span(span("Locale convention", "minor", "Date format"))
    validate_span(span("Other", "minor"))
    with pytest.raises(ValueError, match="unknown MQM category"):
        validate_span(span("Accurazy", "minor", "Omission"))
    with pytest.raises(ValueError, match="unknown subcategory"):
        validate_span(span("Fluency", "minor", "Omission"))
    with pytest.raises(ValueError, match="severity"):
        validate_span(span("Accuracy", "critical", "Omission"))
    validate_span(span("Accuracy", "critical", "Omission"), allow_critical=True)


def test_typology_has_the_seed_001_categories():
    assert list(MQM_TYPOLOGY) == [
        "Accuracy",
        "Fluency",
        "Style",
        "Terminology",
        "Locale convention",
        "Non-translation",
        "Other",
    ]
    # Subtypes reported in seed 001 App. D's error breakdown.
    for label in [
        "Accuracy/Mistranslation",
        "Accuracy/Creative Reinterpretation",
        "Accuracy/Source language fragment",
        "Accuracy/Omission",
        "Accuracy/Gender Mismatch",
        "Accuracy/Addition",
        "Style/Unnatural or awkward",
        "Style/Bad sentence structure",
        "Style/Archaic or obscure word choice",
        "Fluency/Grammar",
        "Fluency/Punctuation",
        "Fluency/Spelling",
        "Terminology/Inappropriate for context",
    ]:
        category, sub = label.split("/")
        assert sub in MQM_TYPOLOGY[category]
    assert typology_choices()[5] == {"category": "Non-translation", "subcategories": []}
