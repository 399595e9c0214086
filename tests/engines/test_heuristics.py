"""Pure heuristics and prompt parsers: no database."""

from __future__ import annotations

import pytest
import wordfreq

from engines import heuristics, prompts
from engines.interfaces import EngineError, HeuristicUnavailable


def test_token_and_char_counts():
    assert heuristics.token_count("Hello, world! It's 2024.", "en") == 4
    assert heuristics.char_count("héllo") == 5


def test_word_rarity_is_the_mean_wordfreq_frequency():
    expected = (wordfreq.word_frequency("the", "en") + wordfreq.word_frequency("cat", "en")) / 2

    assert heuristics.word_rarity("The cat.", "en") == pytest.approx(expected)
    assert heuristics.word_rarity("the cat", "en") > heuristics.word_rarity(
        "the defenestration", "en"
    )
    assert heuristics.word_rarity("!!!", "en") == 0.0


def test_tokenizers_that_need_missing_modules_say_so():
    try:
        import jieba  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(HeuristicUnavailable, match="jieba"):
            heuristics.token_count("你好世界", "zh")
    else:
        assert heuristics.token_count("你好世界", "zh") >= 1


@pytest.mark.parametrize(
    ("heads", "height"),
    [
        ([], 0),
        ([0], 1),
        ([1, 1, 1], 2),  # "the cat sat": both children of the root
        ([1, 2, 2, 2], 3),  # a chain of three below the root... plus a sibling
        ([1, 1, 3, 3], 2),  # two sentences: the higher tree counts
    ],
)
def test_tree_height(heads, height):
    assert heuristics.tree_height(heads) == height


def test_tree_height_rejects_cycles_and_bad_indices():
    with pytest.raises(ValueError, match="cycle"):
        heuristics.tree_height([1, 0])
    with pytest.raises(ValueError, match="out of range"):
        heuristics.tree_height([5])


def test_syntax_depth_is_unavailable_without_a_pipeline():
    lang = "xx-none"  # no pipeline is ever installed for this code
    assert heuristics.syntax_available(lang) is False
    with pytest.raises(HeuristicUnavailable) as info:
        heuristics.syntax_depth("A sentence.", lang)
    assert info.value.permanent
    assert isinstance(info.value, EngineError)


def test_syntax_depth_with_an_installed_pipeline():
    name = heuristics.spacy_pipeline_for("en")
    if name is None:
        pytest.skip("no English spaCy pipeline is installed here (the unavailable path is tested)")
    assert heuristics.syntax_depth("The cat that I saw yesterday sat on the mat.", "en") >= 3


# --- prompt formats --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("<START OF TRANSLATION>Ahoj</END OF TRANSLATION>", "Ahoj"),
        ("Sure.\n<START OF TRANSLATION>\n  Ahoj světe \n</END OF TRANSLATION>\nDone", "Ahoj světe"),
        ("<start of translation>Ahoj<END OF TRANSLATION>", "Ahoj"),
        ("<START OF TRANSLATION>cut off by the token limit", "cut off by the token limit"),
        ("I will write <START OF TRANSLATION> x </END OF TRANSLATION>:\n"
         "<START OF TRANSLATION>real</END OF TRANSLATION>", "real"),
        ("<START OF TRANSLATION>```\nkód\n```</END OF TRANSLATION>", "kód"),
    ],
)  # fmt: skip
def test_parse_translation(output, expected):
    assert prompts.parse_translation(output) == expected


@pytest.mark.parametrize("output", ["Ahoj", "<START OF TRANSLATION>  </END OF TRANSLATION>", ""])
def test_parse_translation_rejects_missing_or_empty(output):
    with pytest.raises(prompts.UnparseableOutput):
        prompts.parse_translation(output)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("SCORE |||70.8|||", 70.8),
        ("notes\nSCORE ||| 64 |||", 64.0),
        ("SCORE |||45.0%|||", 45.0),
        ("SCORE |||55,5|||", 55.5),
        ("SCORE |||-3|||", 0.0),
        ("SCORE |||250|||", 100.0),
        ("first SCORE |||10||| then\nSCORE |||90|||", 90.0),
    ],
)
def test_parse_score(output, expected):
    assert prompts.parse_score(output) == expected


@pytest.mark.parametrize("output", ["SCORE: 80", "score 80/100", "SCORE |||high|||", "|||80|||"])
def test_parse_score_is_strict(output):
    with pytest.raises(prompts.UnparseableOutput):
        prompts.parse_score(output)


def test_parse_judge_and_mapping():
    assert prompts.parse_judge("reasoning [[[86, C1 (Advanced)]]]") == 86.0
    assert prompts.parse_judge("[[[150, C2]]]") == 120.0
    with pytest.raises(prompts.UnparseableOutput):
        prompts.parse_judge("level C1")
    assert prompts.proficiency_to_quality(0) == 100.0
    assert prompts.proficiency_to_quality(120) == 0.0
    assert prompts.proficiency_to_quality(60) == 50.0


def test_prompts_carry_their_versions_and_the_papers_formats():
    t = prompts.translate_prompt("Hi", "en", "cs")
    q = prompts.qe_prompt("Hi", "Ahoj", "en", "cs")
    j = prompts.judge_prompt("Hi", "en", None)

    assert (t.version, q.version, j.version) == ("translate-v1", "qe-gemba-v1", "judge-v1")
    assert "</END OF TRANSLATION>" in t.messages[0]["content"]
    assert q.messages[0]["content"].endswith("SOURCE: |||Hi|||\nTRANSLATION: |||Ahoj|||")
    assert "[[[86, C1 (Advanced)]]]" in j.messages[0]["content"]
    assert " into " not in j.messages[0]["content"].split("\n")[0][:80]
