"""The offline lexical world (engines/offline/lexical_world.py): both reply shapes, pure and
deterministic, and its engine kind through the engines call path."""

from __future__ import annotations

import json
import re

import pytest

from engines.kinds import KIND_LABELS, ParamsError, validate_params
from engines.offline import lexical_world
from engines.offline.lexical_world import rules_reply, selection_reply, world_reply, write_rules
from lexical.rules.prompts import RulePrompt, VariationSentences, parse_rules, rule_messages

PROMPT = RulePrompt(
    "date",
    "en",
    "fa",
    (
        VariationSentences(
            "khorma",
            "khorma",
            (
                "We picked a date from the palm, sweet and ripe.",
                "The date palm gave sweet fruit this year.",
                "A dried date is a sweet snack on a long day.",
            ),
        ),
        VariationSentences(
            "tarikh/tarikhha",
            "tarikh",
            (
                "Put the date of the meeting in the calendar.",
                "The deadline date moved; check the calendar.",
                "What date is the meeting? It is a long day.",
            ),
        ),
    ),
)


def _select(source: str, options: list[str], rules: dict[str, str] | None = None) -> str:
    text = ""
    if rules:
        text = "Rules:\n" + "".join(f"- {k}: {v}\n" for k, v in rules.items()) + "\n"
    text += (
        ("Based on the provided rules, p" if rules else "P")
        + f'lease select the best translation of "date" in "{source}" from the following list: '
        + json.dumps(options, ensure_ascii=False)
        + ". Carefully explain your reasoning first and then enclose your final answer like "
        "this ```answer```."
    )
    return text


def _choice(reply: str) -> str:
    (choice,) = re.findall(r"```([^`]+)```", reply)
    return choice


# --- rule writing ----------------------------------------------------------------------------


@pytest.mark.parametrize("in_user", [False, True])
def test_rules_answer_the_rule_prompt_with_one_rule_per_label(in_user):
    messages = rule_messages(PROMPT, system_prompt_in_user=in_user)
    reply = world_reply(messages, "world")
    assert reply.startswith("```json\n") and reply.endswith("\n```")
    # The app's own strict reader accepts it as is.
    assert parse_rules(reply, PROMPT) == {
        "khorma": "Use «khorma» when the sentence is about: sweet, palm, dried.",
        "tarikh/tarikhha": "Use «tarikh/tarikhha» when the sentence is about: calendar, "
        "meeting, check.",
    }


def test_rules_skip_the_concept_word_words_every_variation_shares_and_function_words():
    rules = write_rules("date", [(b.label, b.sentences) for b in PROMPT.variations], 10)
    # "date"/"dates" is the concept, "long"/"day" occur under both variations.
    for text in rules.values():
        words = text.split(": ", 1)[1].rstrip(".").split(", ")
        assert not {"date", "long", "day", "the", "from", "what"} & set(words)
    assert rules["khorma"].endswith("sweet, palm, dried, fruit, gave, picked, ripe, snack, year.")


def test_rule_words_sets_the_rule_length_and_ties_go_alphabetically():
    rules = write_rules("x", [("a", ["zeta beta", "beta alpha"]), ("b", ["gamma"])], 2)
    assert rules == {
        "a": "Use «a» when the sentence is about: beta, alpha.",
        "b": "Use «b» when the sentence is about: gamma.",
    }


def test_a_variation_without_distinctive_words_gets_a_fallback_rule():
    rules = write_rules("x", [("a", ["same words"]), ("b", ["same words"]), ("c", [])], 3)
    assert rules == {
        "a": "Use «a» when no other variation fits.",
        "b": "Use «b» when no other variation fits.",
        "c": "Use «c» when no other variation fits.",
    }


def test_a_re_ask_gets_the_same_rules_and_the_answer_is_deterministic():
    messages = rule_messages(PROMPT)
    first = world_reply(messages, "world")
    again = [
        *messages,
        {"role": "assistant", "content": "oops"},
        {"role": "user", "content": "Your answer could not be used: missing key(s)."},
    ]
    assert world_reply(again, "world") == first == world_reply(messages, "other-world")


def test_text_that_is_neither_shape_gets_a_plain_refusal():
    assert rules_reply("hello") is None
    assert selection_reply("hello", "w") is None
    reply = world_reply([{"role": "user", "content": "Translate this."}], "w")
    assert reply == "I can only write lexical rules or choose between translations."


# --- selection -------------------------------------------------------------------------------

RULES = {
    "khorma": "Use «khorma» when the sentence is about: palm, sweet, fruit.",
    "tarikh/tarikhha": "Use «tarikh/tarikhha» when the sentence is about: calendar, meeting.",
}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("The sweet date fell from the palm.", "khorma"),
        ("Which date is the meeting in your calendar?", "tarikh/tarikhha"),
    ],
)
def test_with_rules_the_option_whose_rule_words_overlap_most_wins_in_any_order(source, expected):
    for options in (["khorma", "tarikh/tarikhha"], ["tarikh/tarikhha", "khorma"]):
        reply = selection_reply(_select(source, options, RULES), "w", skill=0.0)
        assert _choice(reply) == expected
        assert reply.index("```") > 0  # reasoning first


def test_with_rules_a_tie_goes_to_the_first_listed_option():
    source = "No rule word appears here."
    for options in (["khorma", "tarikh/tarikhha"], ["tarikh/tarikhha", "khorma"]):
        reply = selection_reply(_select(source, options, RULES), "w", skill=1.0)
        assert _choice(reply) == options[0]


def test_the_rules_block_reads_labels_with_slashes_and_colons_in_rules():
    rules = {"tarikh/tarikhha": "Note: about meeting times.", "khorma": "Note: palm fruit."}
    reply = selection_reply(
        _select("The meeting moved.", ["khorma", "tarikh/tarikhha"], rules), "w"
    )
    assert _choice(reply) == "tarikh/tarikhha"


def test_without_rules_skill_zero_picks_by_a_stable_hash_independent_of_order():
    options = ["viaje", "recorrido", "excursión"]
    sources = [f"Sentence number {i} about a trip." for i in range(60)]
    picks = {}
    for source in sources:
        a = _choice(selection_reply(_select(source, options), "w-a", skill=0.0))
        b = _choice(selection_reply(_select(source, list(reversed(options))), "w-a", skill=0.0))
        assert a == b  # the order shown does not matter
        assert a == _choice(selection_reply(_select(source, options), "w-a", skill=0.0))
        picks[source] = a
    # Spread over the options, and another engine name picks differently somewhere.
    assert set(picks.values()) == set(options)
    other = [_choice(selection_reply(_select(s, options), "w-b", skill=0.0)) for s in sources]
    assert other != list(picks.values())


def test_without_rules_skill_one_uses_the_cognate_cue():
    options = ["excursión", "viaje"]
    reply = selection_reply(_select("The school excursion left early.", options), "w", skill=1.0)
    assert _choice(reply) == "excursión"
    # No overlap at all is no cue: the order-free hash guess, as with skill 0.
    source = "The trip to the coast was long."
    for shown in (options, list(reversed(options))):
        reply = selection_reply(_select(source, shown), "w", skill=1.0)
        assert _choice(reply) == _choice(selection_reply(_select(source, options), "w", 0.0))


def test_skill_sets_how_often_the_cue_is_used():
    options = ["zzz", "excursion"]  # the cue always points at "excursion"
    sources = [f"An excursion, take {i}." for i in range(400)]

    def accuracy(skill: float) -> float:
        picks = [_choice(selection_reply(_select(s, options), "w", skill)) for s in sources]
        return picks.count("excursion") / len(picks)

    low, high = accuracy(0.1), accuracy(0.9)
    # Without the cue the hash picks each option half the time: 0.55 and 0.95 expected.
    assert 0.45 < low < 0.65 and 0.9 < high <= 1.0
    assert accuracy(1.0) == 1.0


def test_a_source_with_quotes_and_a_re_ask_suffix_is_still_read():
    text = _select('He said "the date" twice.', ["khorma", "tarikh/tarikhha"], RULES)
    text += "\nPlease enclose your selected translation from <Translations> with 3 back ticks."
    reply = world_reply([{"role": "user", "content": text}], "w")
    assert _choice(reply) in {"khorma", "tarikh/tarikhha"}


def test_an_unreadable_option_list_gets_an_answer_without_a_choice():
    text = 'Please select the best translation of "date" in "x" from the following list: [1, 2].'
    assert "```" not in selection_reply(text, "w")


def test_the_world_is_pure_and_deterministic_across_calls():
    text = _select("A sweet palm date.", ["khorma", "tarikh/tarikhha"])
    replies = {selection_reply(text, "w", 0.5) for _ in range(5)}
    assert len(replies) == 1


# --- the engine kind -------------------------------------------------------------------------


def test_the_kind_is_labelled_a_simulation_and_validates_its_parameters():
    assert "simulation" in KIND_LABELS["lexical_world"]
    validate_params("lexical_world", {"skill": 0.3, "rule_words": 5})
    with pytest.raises(ParamsError) as caught:
        validate_params("lexical_world", {"skill": 1.5, "rule_words": 0, "x": 1})
    assert len(caught.value.messages) == 3
    with pytest.raises(ParamsError):
        validate_params("lexical_world", {"skill": float("nan")})


@pytest.mark.django_db
def test_the_engine_answers_through_the_call_path_with_a_local_ledger_row():
    from engines.models import EngineCall
    from engines.registry import resolve
    from tests.lexical.rule_helpers import world_engine

    world_engine("world", skill=1.0, rule_words=1)
    chat = resolve("world", "chat", scope="lexical_rules:test")
    one, two = chat.complete_many(
        [rule_messages(PROMPT), [{"role": "user", "content": _select("palm", ["a", "b"])}]]
    )
    assert json.loads(one.text.removeprefix("```json\n").removesuffix("\n```")) == {
        "khorma": "Use «khorma» when the sentence is about: sweet.",
        "tarikh/tarikhha": "Use «tarikh/tarikhha» when the sentence is about: calendar.",
    }
    # "palm" overlaps neither option: the engine's hash guess.
    assert _choice(two.text) == _choice(selection_reply(_select("palm", ["a", "b"]), "world", 0))
    (call,) = EngineCall.objects.filter(scope="lexical_rules:test")
    assert (call.operation, call.items, call.cost) == ("complete", 2, 0)
    assert lexical_world.DEFAULT_SKILL == 0.5


@pytest.mark.django_db
def test_with_its_own_rules_the_world_selects_the_attested_variation_better_than_without():
    """End to end through the DB: world rules for the fixture concepts, then Fig. 8 prompts
    with them for fresh sentences of each variation, against Fig. 7 prompts without."""
    from lexical.models import Rule
    from lexical.rules.services import run_in_foreground, start_rule_jobs
    from tests.lexical.rule_helpers import CONCEPTS, make_mining_job, sentence, world_engine

    mining = make_mining_job()
    world_engine("world", skill=0.5)
    (job,) = start_rule_jobs({"engines": ["world"], "mining_job": mining.pk}, enqueue=False)
    run_in_foreground(job.pk)
    with_rules = without = total = 0
    for lemma, variations in CONCEPTS.items():
        rules = dict(
            Rule.objects.filter(job=job, concept__lemma=lemma).values_list(
                "variation__lemma", "text"
            )
        )
        labels = {v: "/".join(forms) for v, (forms, _) in variations.items()}
        options = sorted(labels.values())
        for var_lemma, (_, words) in variations.items():
            for n in range(10, 16):  # sentences the rules were not written from
                source = sentence(lemma, words, n)
                shown = {labels[v]: text for v, text in rules.items()}
                with_rules += (
                    _choice(selection_reply(_select(source, options, shown), "world"))
                    == (labels[var_lemma])
                )
                without += (
                    _choice(selection_reply(_select(source, options), "world"))
                    == (labels[var_lemma])
                )
                total += 1
    assert with_rules == total == 30
    assert without < total * 0.8
