"""The pure data-quality statistics (seed 001 §3.2) and the analysis answer parser, with
values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engines.offline.breaker_world import analysis_reply
from search.breaker.analysis import analysis_prompt, parse_analysis
from search.breaker.parsing import ParseFailure
from search.breaker.statistics import (
    Analysis,
    aggregate_analyses,
    chrf_diversity,
    embedding_diversity,
    normalise_label,
    word_statistics,
)


def test_embedding_diversity_is_the_mean_pairwise_cosine_distance():
    # Pairs: (x, y) orthogonal = 1; (x, x+y) and (y, x+y) = 1 - 1/sqrt(2) each.
    value = embedding_diversity(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))

    assert value == pytest.approx((1 + 2 * (1 - 1 / math.sqrt(2))) / 3, abs=1e-12)


def test_embedding_diversity_ignores_scale_and_treats_zero_vectors_as_orthogonal():
    assert embedding_diversity(np.array([[2.0, 0.0], [5.0, 0.0]])) == 0.0
    assert embedding_diversity(np.array([[0.0, 0.0], [1.0, 0.0]])) == 1.0
    with pytest.raises(ValueError, match="at least two vectors"):
        embedding_diversity(np.array([[1.0, 0.0]]))


def test_chrf_diversity_averages_one_minus_chrf_over_ordered_pairs():
    # chrF++ of "the cat sat" against "a dog ran" is 3.3784, the other way 2.9070 (sacrebleu
    # 2.x, nc:6 nw:2); identical texts score 100, i.e. distance 0.
    result = chrf_diversity(["the cat sat", "the cat sat", "a dog ran"])

    expected = (0 + 0 + 2 * (1 - 0.033783784) + 2 * (1 - 0.029069767)) / 6
    assert result.value == pytest.approx(expected, abs=1e-8)
    assert (result.pairs, result.sampled) == (6, False)
    assert result.signature.startswith("#:1|c:mixed|e:yes|nc:6|nw:2|s:no|v:2.")


def test_chrf_diversity_samples_pairs_with_the_injected_generator():
    texts = [f"text number {i} about {w}" for i, w in enumerate("abcdefgh")]

    first = chrf_diversity(texts, max_pairs=10, rng=np.random.default_rng(7))
    again = chrf_diversity(texts, max_pairs=10, rng=np.random.default_rng(7))

    assert (first.pairs, first.sampled) == (10, True)
    assert first.value == again.value
    with pytest.raises(ValueError, match="pass an rng"):
        chrf_diversity(texts, max_pairs=10)


def test_word_statistics():
    stats = word_statistics(["The cat sat.", "the dog didn't sit"])

    # Words: The cat sat | the dog didn't sit -> 6 distinct, 7 words of 24 characters.
    assert stats == {"unique_words": 6.0, "avg_word_count": 3.5, "avg_word_length": 24 / 7}


def test_aggregate_counts_distinct_labels_and_averages_the_scales():
    a = Analysis(90, 80, 10, 40, ("Science", "technology."), ("idioms",))
    b = Analysis(70, 60, 30, 60, ("science ",), ("Idioms", "rare words"))

    out = aggregate_analyses([a, b])

    assert out == {
        "unique_topics": 2.0, "unique_error_modes": 2.0, "grammaticality": 80.0,
        "naturalness": 70.0, "word_rarity": 20.0, "syntax_complexity": 50.0,
    }  # fmt: skip
    assert normalise_label("  Named   Entities. ") == "named entities"


# --- parsing the analyst's answer ----------------------------------------------------------


GOOD = (
    '{"grammaticality": 90, "naturalness": "80", "word rarity": 50, "syntax complexity": 70.5,'
    ' "topics": ["science", "technology"], "error modes": ["idioms"]}'
)


def test_a_good_answer_parses():
    assert parse_analysis(GOOD) == Analysis(90, 80, 50, 70.5, ("science", "technology"),
                                            ("idioms",))  # fmt: skip


def test_fences_prose_trailing_commas_and_underscored_keys_are_accepted():
    answer = (
        'Sure! Here it is:\n```json\n{\n"grammaticality": 90,\n"naturalness": 80,\n'
        '"word_rarity": 50,\n"Syntax-Complexity": 70,\n"topics": ["science",],\n'
        '"error_modes": [],\n}\n```\nHope this helps.'
    )

    parsed = parse_analysis(answer)

    assert (parsed.word_rarity, parsed.syntax_complexity, parsed.topics) == (50, 70, ("science",))
    assert parsed.error_modes == ()


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("I cannot do that.", "the answer holds no JSON object"),
        ('{"grammaticality": 90,, }', "the JSON object does not parse"),
        (GOOD.replace('"naturalness": "80", ', ""), '"naturalness" is missing'),
        (
            GOOD.replace('"80"', '"high"'),
            "\"naturalness\" must be a number from 0 to 100, got 'high'",
        ),
        (GOOD.replace("70.5", "170"), '"syntax complexity" must be from 0 to 100, got 170'),
        (GOOD.replace('["science", "technology"]', "[]"), '"topics" must list at least 1'),
        (GOOD.replace('["idioms"]', "[1, 2]"), '"error modes" must be a list of strings'),
        (GOOD.replace("90", "true"), '"grammaticality" must be a number from 0 to 100'),
    ],
)
def test_bad_answers_fail_with_a_reason_naming_the_field(answer, reason):
    with pytest.raises(ParseFailure) as caught:
        parse_analysis(answer)
    assert caught.value.reason.startswith(reason)


def test_the_prompt_names_the_target_language_and_carries_the_text():
    (message,) = analysis_prompt("Hello there.", "Czech")

    assert "into Czech" in message["content"]
    assert message["content"].endswith("ANALYSE THIS TEXT |||Hello there.|||")


def test_the_offline_editor_answers_the_prompt_with_parseable_json():
    plain = parse_analysis(analysis_reply("We walk to the old house by the river every morning."))
    hard = parse_analysis(
        analysis_reply(
            "My confrère has a minuscule coracle, once in a blue moon, about 3.5 million."
        )
    )

    assert plain.topics == ("travel", "home", "nature") and plain.error_modes == ()
    assert hard.error_modes == ("rare words", "idioms", "numerical expressions")
    assert hard.word_rarity > plain.word_rarity and hard.naturalness < plain.naturalness
