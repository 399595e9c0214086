"""The offline MT-breaker world (a simulation): editor, fragile translator and fragile QE."""

from __future__ import annotations

import pytest

from engines.models import EngineCall
from engines.offline import breaker_world as world
from engines.registry import resolve
from engines.services import save_engine


def test_the_editor_answers_a_first_request_with_a_plain_text_in_the_papers_format():
    prompt = "Write a hard text. Aim for about 20 words. (Request 1.) End with SOURCE |||<x>|||"
    answer = world.editor_reply([{"role": "user", "content": prompt}])
    assert answer == world.editor_reply([{"role": "user", "content": prompt}])  # deterministic
    text = answer.rsplit("SOURCE |||", 1)[1].removesuffix("|||")
    assert 15 <= len(text.split()) <= 45


def test_each_edit_adds_trouble_and_qe_feedback_edits_the_lowest_scoring_source():
    chat = [
        {"role": "user", "content": "Aim for about 12 words."},
        {"role": "assistant", "content": "SOURCE |||We walk to the old house by the river.|||"},
        {"role": "user", "content": "TRANSLATION |||x||| SCORE |||40.0%||| lowest score"},
        {"role": "assistant", "content": "SOURCE |||Something else entirely here.|||"},
        {"role": "user", "content": "TRANSLATION |||y||| SCORE |||90.0%||| the lowest score"},
    ]
    edited = world.editor_reply(chat).rsplit("SOURCE |||", 1)[1].removesuffix("|||")
    # Built on the first source (score 40), not the last one (score 90).
    assert "river" in edited or "domicile" in edited or "antediluvian" in edited


@pytest.mark.parametrize(
    ("source", "failure"),
    [
        ("We perambulate to the house.", "rare"),
        ("We walk once in a blue moon to the house.", "idiom"),
        ("We walk 3.5 million steps.", "number"),
        (" ".join(["word"] * 40) + ".", "long"),
    ],
)
def test_the_fragile_translator_fails_on_exactly_what_it_is_told(source, failure):
    robust = world.fragile_translate(source, "cs", fails_on=[])
    fragile = world.fragile_translate(source, "cs", fails_on=[failure])
    assert world.fragile_quality(source, fragile) < world.fragile_quality(source, robust) - 5


def test_engines_of_the_offline_world_go_through_the_registry_and_the_ledger(db):
    for spec in (
        {"name": "editor", "kind": "breaker_editor", "capabilities": ["chat"]},
        {"name": "fragile", "kind": "fragile_mt", "capabilities": ["translate"],
         "params": {"fails_on": ["rare", "number"]}},
        {"name": "fragile-qe", "kind": "fragile_qe", "capabilities": ["quality"]},
    ):  # fmt: skip
        save_engine(spec)
    chat = resolve("editor", "chat", scope="t")
    (completion,) = chat.complete_many([[{"role": "user", "content": "about 10 words"}]])
    text = completion.text.rsplit("SOURCE |||", 1)[1].removesuffix("|||")
    (translation,) = resolve("fragile", "translate", scope="t").translate([text], "en", "cs")
    (quality,) = resolve("fragile-qe", "quality", scope="t").score(
        [(text, translation)], "en", "cs"
    )
    assert 0 <= quality <= 100
    assert EngineCall.objects.filter(scope="t").count() == 3


def test_fragile_mt_params_are_validated(db):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="fails_on"):
        save_engine(
            {"name": "bad", "kind": "fragile_mt", "capabilities": ["translate"],
             "params": {"fails_on": ["gender"]}}
        )  # fmt: skip


def test_the_translator_knows_czech_and_german_and_copies_other_languages():
    source = "We walk to the old house."
    assert world.fragile_translate(source, "cs", fails_on=[]) == "my jít do starý dům."
    assert world.fragile_translate(source, "de", fails_on=[]) == "wir gehen zu die alt Haus."
    assert world.fragile_translate(source, "zh", fails_on=[]) == "we walk to the old house."
