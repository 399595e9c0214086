"""The rule prompt's reader (lexical/rules/prompts.py): key matching and hostile answers. Pure."""

from __future__ import annotations

import json

import pytest

from lexical.rules.prompts import (
    MAX_RULE_CHARS,
    RuleAnswerError,
    RulePrompt,
    VariationSentences,
    parse_rules,
    reask_message,
)

PROMPT = RulePrompt(
    "trip",
    "en",
    "es",
    (
        VariationSentences("viaje/viajes", "viaje", ("A trip abroad.",)),
        VariationSentences("recorrido", "recorrido", ("A guided trip.",)),
        # A lemma that is another variation's label is no alias.
        VariationSentences("paseo/recorrido2", "recorrido", ()),
    ),
)
GOOD = {"viaje/viajes": "a", "recorrido": "b", "paseo/recorrido2": "c"}


def test_keys_match_trimmed_in_any_order_with_spaces_around_slashes():
    answer = json.dumps({" paseo / recorrido2 ": "c", "recorrido": "b", "viaje /viajes": "a "})
    assert parse_rules(answer, PROMPT) == GOOD


def test_an_unambiguous_lemma_is_an_alias_and_naming_a_variation_twice_is_refused():
    assert parse_rules(json.dumps({**GOOD, "viaje/viajes": "a"}), PROMPT)["viaje/viajes"] == "a"
    aliased = {"viaje": "a", "recorrido": "b", "paseo/recorrido2": "c"}
    assert parse_rules(json.dumps(aliased), PROMPT) == GOOD
    with pytest.raises(RuleAnswerError, match="'viaje/viajes' is given twice"):
        parse_rules(json.dumps({**GOOD, "viaje": "again"}), PROMPT)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (json.dumps({"viaje/viajes": "a", "recorrido": "b"}), "missing key(s) 'paseo/recorrido2'"),
        (json.dumps({**GOOD, "Viaje": "x"}), "unknown key(s) 'Viaje'"),
        (json.dumps({**GOOD, "recorrido": "x" * (MAX_RULE_CHARS + 1)}), "characters long"),
        (json.dumps({**GOOD, "recorrido": ["b"]}), "not a non-empty string"),
        (json.dumps({**GOOD, "recorrido": "   "}), "not a non-empty string"),
        ("{" * 100 + "}" * 100, "not valid JSON"),
        ('{"viaje/viajes": Infinity}', "Infinity"),
        ("```json\n[1]\n```", "not an object"),
        ("", "contains no JSON object"),
    ],
)
def test_refusals_say_what_is_wrong(answer, message):
    with pytest.raises(RuleAnswerError) as caught:
        parse_rules(answer, PROMPT)
    assert message in str(caught.value)


def test_an_unknown_huge_key_is_quoted_short():
    with pytest.raises(RuleAnswerError) as caught:
        parse_rules(json.dumps({**GOOD, "k" * 10_000: "x"}), PROMPT)
    assert len(str(caught.value)) < 200


def test_the_re_ask_names_the_problem_and_the_exact_keys():
    message = reask_message(PROMPT, "missing key(s) 'recorrido'")
    assert message["role"] == "user"
    assert "missing key(s) 'recorrido'" in message["content"]
    assert '["viaje/viajes", "recorrido", "paseo/recorrido2"]' in message["content"]
