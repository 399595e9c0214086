"""The pure parts of MT-breaker: parsing answers, selection, curves, word diff, edit share,
prompts and the chat rebuilt from steps (seed 001 Alg. 1, App. B)."""

from __future__ import annotations

import pytest

from search.breaker.diff import edit_share, word_diff
from search.breaker.methods import METHODS, steps_per_chain
from search.breaker.parsing import ParseFailure, format_score, parse_source
from search.breaker.prompts import (
    PROMPT_VERSION,
    StepView,
    conversation,
    first_prompt,
    follow_up,
)
from search.breaker.selection import curves, mean_quality, running_min, select_step

# --- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("SOURCE |||Hello there.|||", "Hello there."),
        ("Thinking...\nSOURCE: ||| Spaced out. |||", "Spaced out."),
        ("source |||lower case|||", "lower case"),
        # The last one counts: models quote the format or revise themselves.
        ("First try SOURCE |||one||| then better SOURCE |||two|||", "two"),
        ("Format: SOURCE |||<SOURCE_TEXT>|||\nSOURCE |||real text|||", "real text"),
        ("SOURCE |||real text|||\nas asked: SOURCE |||<SOURCE_TEXT>|||", "real text"),
        ("SOURCE |||Line one.\nLine two.|||", "Line one.\nLine two."),
        ('SOURCE |||"Quoted text."|||', "Quoted text."),
        ("SOURCE |||```fenced```|||", "fenced"),
        ("SOURCE ||||four bars||||", "four bars"),
        # Ran out of tokens before the closing bars.
        ("Here it is: SOURCE |||Cut off at the end", "Cut off at the end"),
    ],
)
def test_parse_source_reads_the_last_text_robustly(answer, expected):
    assert parse_source(answer) == expected


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "the answer is empty"),
        ("   ", "the answer is empty"),
        ("I refuse.", "no 'SOURCE |||…|||' with a text in the answer"),
        ("SOURCE ||||||", "no 'SOURCE |||…|||' with a text in the answer"),
        ("SOURCE |||<SOURCE_TEXT>|||", "no 'SOURCE |||…|||' with a text in the answer"),
        ("TRANSLATION |||Ahoj|||", "no 'SOURCE |||…|||' with a text in the answer"),
        ("SOURCE |||" + "x" * 6000 + "|||", "the source text is longer than 5000 characters"),
    ],
)
def test_parse_source_refuses_answers_without_a_text(answer, reason):
    with pytest.raises(ParseFailure) as caught:
        parse_source(answer)
    assert caught.value.reason == reason


def test_scores_are_shown_in_the_papers_format():
    assert format_score(71.3) == "SCORE |||71.3%|||"
    assert format_score(100) == "SCORE |||100.0%|||"


# --- selection and curves ----------------------------------------------------------------------


def test_selection_takes_the_lowest_quality_and_the_earliest_on_ties():
    assert select_step([80.0, 60.0, 70.0, 60.0]) == 1
    assert select_step([50.0]) == 0
    with pytest.raises(ValueError):
        select_step([])


def test_quality_is_the_mean_over_targets_of_the_mean_over_qe_engines():
    qe = {"mt-a": {"qe1": 80.0, "qe2": 60.0}, "mt-b": {"qe1": 40.0, "qe2": 40.0}}
    assert mean_quality(qe) == 55.0
    with pytest.raises(ValueError):
        mean_quality({})


def test_curves_are_the_mean_per_step_and_the_mean_running_minimum():
    assert running_min([5.0, 7.0, 3.0, 4.0]) == [5.0, 5.0, 3.0, 3.0]
    rows = curves([[90.0, 70.0, 80.0], [60.0, 80.0]])
    assert rows == [
        {"step": 0, "chains": 2, "mean": 75.0, "running_min": 75.0},
        {"step": 1, "chains": 2, "mean": 75.0, "running_min": 65.0},
        # The second chain stopped: its minimum (60) still counts in the running minimum.
        {"step": 2, "chains": 1, "mean": 80.0, "running_min": 65.0},
    ]
    assert curves([]) == []


# --- diff and edit share -------------------------------------------------------------------


def test_word_diff_marks_kept_added_and_removed_words():
    assert word_diff("we fly tomorrow", "we fly spins tomorrow") == [
        ("same", "we fly"),
        ("added", "spins"),
        ("same", "tomorrow"),
    ]
    assert word_diff("a b c", "a x c") == [
        ("same", "a"),
        ("removed", "b"),
        ("added", "x"),
        ("same", "c"),
    ]


def test_edit_share_is_the_share_of_words_changed():
    assert edit_share("a b c d", "a b c d") == 0.0
    assert edit_share("a b c d", "w x y z") == 1.0
    assert edit_share("a b c d", "a b x d") == 0.25
    assert edit_share("a b", "a b c d") == 0.5  # doubling the length is a 50 % edit
    assert edit_share("", "") == 0.0


# --- methods and prompts -------------------------------------------------------------------


def test_every_method_of_the_paper_is_there_with_its_number_of_steps():
    assert set(METHODS) == {
        "seeds", "zeroshot", "zeroshot_history", "zeroshot_min", "breaker_seeded",
        "breaker_seedless", "breaker_seeded_qe", "breaker_seedless_qe",
    }  # fmt: skip
    assert steps_per_chain("breaker_seeded", 10, 10) == 11
    assert steps_per_chain("zeroshot_min", 10, 7) == 7
    assert steps_per_chain("seeds", 10, 10) == steps_per_chain("zeroshot", 10, 10) == 1


def test_the_first_prompt_asks_for_the_length_and_the_papers_format():
    prompt = first_prompt("en", "cs", 31, "0-3", earlier=["An old  text.", "Another."])
    assert "English" in prompt and "Czech" in prompt and "about 31 words" in prompt
    assert prompt.endswith("SOURCE |||<SOURCE_TEXT>|||")
    assert "Request 0-3." in prompt
    assert "- An old text.\n- Another." in prompt
    assert PROMPT_VERSION == "breaker-v1"


def _step(quality=71.3, translations=("Ahoj.",), per_target=(71.3,)):
    return StepView("Hello.", "", translations, per_target, quality)


def test_follow_up_shows_translation_score_and_edit_limit():
    plain = follow_up(_step(), qe_feedback=False, max_edit_share=0.75)
    assert "TRANSLATION |||Ahoj.|||" in plain
    assert "SCORE" not in plain and "at most 75% of the source" in plain
    with_qe = follow_up(_step(), qe_feedback=True, max_edit_share=0.5)
    assert "SCORE |||71.3%|||" in with_qe
    assert "at most 50% of the best source so far" in with_qe
    multi = follow_up(_step(50.0, ("A", "B"), (40.0, 60.0)), qe_feedback=True, max_edit_share=0.75)
    assert "System 1: TRANSLATION |||A|||" in multi and "System 2: TRANSLATION |||B|||" in multi
    assert "System 2 quality: SCORE |||60.0%|||" in multi
    assert "Mean quality score: SCORE |||50.0%|||" in multi


def test_the_chat_is_rebuilt_from_the_steps_with_the_seed_as_first_answer():
    seed = StepView("Seed text.", "", ("Semínko.",), (90.0,), 90.0)
    edit = StepView(
        "Edited text.", "Sure. SOURCE |||Edited text.|||", ("Upraveno.",), (70.0,), 70.0
    )
    messages = conversation("FIRST", [seed, edit], qe_feedback=False, max_edit_share=0.75)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"] == "SOURCE |||Seed text.|||"
    assert messages[3]["content"] == "Sure. SOURCE |||Edited text.|||"
    assert "TRANSLATION |||Upraveno.|||" in messages[4]["content"]
