"""Answer and item validation (pure module): offsets, graphemes, completeness checklists."""

from __future__ import annotations

import pytest

from annotation import protocols


@pytest.mark.parametrize(
    ("text", "index", "ok"),
    [
        ("Cafe\u0301", 4, False),  # before a combining acute accent
        ("Cafe\u0301", 5, True),
        ("👩\u200d💻 ok", 1, False),  # inside a ZWJ emoji sequence
        ("👩\u200d💻 ok", 2, False),
        ("👩\u200d💻 ok", 3, True),
        ("👍🏽!", 1, False),  # before a skin-tone modifier
        ("नमस्ते", 1, True),
        ("नमस्ते", 3, False),  # before the virama
        ("नमस्ते", 5, False),  # before a vowel sign
        ("東京都", 1, True),
        ("שלום עולם", 4, True),
        ("abc", 0, True),
        ("abc", 3, True),
        ("abc", 4, False),
        ("🇩🇪🇫🇷", 1, False),  # between the two regional indicators of a flag
        ("🇩🇪🇫🇷", 2, True),  # between two flags
        ("🇩🇪🇫🇷", 3, False),
        ("👨\u200d👩\u200d👧 x", 3, False),  # inside a family ZWJ sequence
        ("👨\u200d👩\u200d👧 x", 5, True),
        ("❤\ufe0f!", 1, False),  # before a variation selector
        ("\r\n", 1, False),  # CR LF is one cluster
    ],
)
def test_grapheme_boundaries(text, index, ok):
    assert protocols.grapheme_boundary(text, index) is ok


def test_a_span_may_not_split_a_flag():
    target = "Go 🇩🇪!"
    assert protocols.span_errors([{"start": 3, "end": 5}], target) == []
    assert protocols.span_errors([{"start": 3, "end": 4}], target) == [
        "spans[1]: 3..4 splits a character"
    ]


def test_offsets_are_python_code_points_for_astral_characters():
    target = "𝔘𝔫𝔦 ok"  # each 𝔘 is one code point (two UTF-16 units in the browser)
    assert protocols.span_errors([{"start": 0, "end": 3}], target) == []
    assert protocols.span_errors([{"start": 4, "end": 6}], target) == []
    assert protocols.span_errors([{"start": 4, "end": 8}], target) != []


def test_missing_marker_sits_at_the_end():
    target = "Hallo Welt"
    ok = {"start": 10, "end": 10, "missing": True, "severity": "major"}
    assert protocols.span_errors([ok], target) == []
    bad = protocols.span_errors([{**ok, "start": 3, "end": 3}], target)
    assert bad == ["spans[1]: a [MISSING] span has start = end = 10 (the end of the target)"]


def test_esa_checklist_lists_exactly_what_is_missing():
    _, errors, missing = protocols.clean_answer("esa", {}, target="abc")
    assert (errors, missing) == ([], ["give a 0–100 score"])
    _, _, missing = protocols.clean_answer("esa", {"spans": [], "score": 50}, target="abc")
    assert missing == ["confirm the score 50 although no error span is marked"]
    _, _, missing = protocols.clean_answer("esa", {"spans": [], "score": 66}, target="abc")
    assert missing == []
    _, errors, _ = protocols.clean_answer("esa", {"score": 101}, target="abc")
    assert errors == ["the score must be a whole number from 0 to 100"]
    _, errors, _ = protocols.clean_answer("esa", {"score": True}, target="abc")
    assert errors == ["the score must be a whole number from 0 to 100"]


def test_mqm_checklist():
    span = {"start": 0, "end": 1, "severity": "minor"}
    _, errors, missing = protocols.clean_answer("mqm", {"spans": [span]}, target="ab")
    assert (errors, missing) == ([], ["span 1: choose a category"])
    cat = {**span, "category": "Fluency"}
    _, _, missing = protocols.clean_answer("mqm", {"spans": [cat]}, target="ab")
    assert missing == ["span 1: choose a subcategory of Fluency"]
    nt = {**span, "category": "Non-translation"}
    _, errors, missing = protocols.clean_answer("mqm", {"spans": [nt]}, target="ab")
    assert (errors, missing) == ([], [])
    _, _, missing = protocols.clean_answer("mqm", {"spans": []}, target="ab")
    assert missing == ["mark error spans, or tick 'no errors'"]
    _, errors, _ = protocols.clean_answer("mqm", {"spans": [nt], "no_errors": True}, target="ab")
    assert errors == ["'no errors' is ticked but error spans are marked"]
    _, errors, _ = protocols.clean_answer(
        "mqm", {"spans": [{**cat, "subcategory": "Bogus"}]}, target="ab"
    )
    assert errors == ["span 1: unknown subcategory 'Bogus' for MQM category 'Fluency'"]


def test_choice_answers():
    clean, errors, missing = protocols.clean_answer(
        "choice", {"selected": [2, 2], "confidence": 3}, n_choices=3
    )
    assert clean == {"selected": [2], "confidence": 3, "comment": ""} and not errors + missing
    _, errors, _ = protocols.clean_answer("choice", {"selected": [0, 1]}, n_choices=3)
    assert "choose only one option" in errors
    _, errors, _ = protocols.clean_answer(
        "choice", {"selected": [0, 1], "confidence": 6}, n_choices=3, multi_select=True
    )
    assert errors == ["confidence must be 1 to 5"]
    _, errors, _ = protocols.clean_answer("choice", {"selected": [3]}, n_choices=3)
    assert errors == ["option 3 does not exist"]
    _, _, missing = protocols.clean_answer("choice", {}, n_choices=3, ask_confidence=False)
    assert missing == ["choose an option"]


def test_normalize_item_defaults_and_errors():
    item = protocols.normalize_item(
        "esa", {"doc_id": 7, "seg_id": 1, "source": "a", "target": "b"}, {"src_lang": "en"}
    )
    assert (item["doc_id"], item["src_lang"], item["kind"], item["meta"]) == (
        "7",
        "en",
        "regular",
        {},
    )
    with pytest.raises(protocols.ItemError, match="expected is only for"):
        protocols.normalize_item(
            "esa", {"doc_id": 1, "seg_id": 1, "source": "a", "target": "b", "expected": {}}
        )
    with pytest.raises(protocols.ItemError, match="choices are only for choice"):
        protocols.normalize_item(
            "esa", {"doc_id": 1, "seg_id": 1, "source": "a", "target": "b", "choices": ["x"]}
        )
