"""Pure mining modules: parameters, tokens, the paper's entropy filter, counts and examples."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from lexical.mining.counting import MiningCounts
from lexical.mining.examples import ExampleCollector
from lexical.mining.filters import (
    ConceptCandidate,
    conditional_probabilities,
    entropy,
    filter_concepts,
)
from lexical.mining.params import MiningParams, MiningParamsError, parse_params
from lexical.mining.pipeline import Miner, chunked
from lexical.mining.text import Lemmatiser, Token, is_content, language_code, tokenise

# --- parameters -------------------------------------------------------------------------------


def test_defaults_are_the_papers():
    params = parse_params({})
    assert (params.min_variation_count, params.min_variations, params.min_entropy) == (
        50,
        2,
        0.69,
    )
    assert params.max_examples == 100 and params.example_token_limit == 50


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"min_variation_count": 0}, "min_variation_count"),
        ({"min_variation_count": "many"}, "min_variation_count"),
        ({"min_variation_count": True}, "min_variation_count"),
        ({"min_variations": 1}, "min_variations"),
        ({"min_entropy": "nan"}, "min_entropy"),
        ({"min_entropy": float("inf")}, "min_entropy"),
        ({"min_entropy": -0.1}, "min_entropy"),
        ({"chunk_size": 10**12}, "chunk_size"),
        ({"pos_pipeline": 3}, "pos_pipeline"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_parameters_are_refused_by_field(raw, field):
    with pytest.raises(MiningParamsError) as caught:
        parse_params(raw)
    assert field in caught.value.errors


def test_parameters_must_be_an_object():
    with pytest.raises(MiningParamsError) as caught:
        parse_params([1, 2])
    assert caught.value.errors == {"params": "must be a JSON object"}


def test_numbers_given_as_strings_are_read():
    params = parse_params({"min_variation_count": "30", "min_entropy": "0.5"})
    assert params.min_variation_count == 30 and params.min_entropy == 0.5


# --- tokens -----------------------------------------------------------------------------------


def test_tokens_carry_python_string_offsets():
    text = "The trips, re-booked — 3 times."
    tokens = tokenise(text)
    assert [t for t, _, _ in tokens] == ["The", "trips", ",", "re-booked", "—", "3", "times", "."]
    assert all(text[s:e] == word for word, s, e in tokens)


def test_lemmas_are_lowercased_simplemma_lemmas():
    english = Lemmatiser("en-US")
    assert english.supported and english("Trips") == "trip" and english("went") == "go"
    assert Lemmatiser("es")("Viajes") == "viaje"


def test_an_unknown_language_keeps_lowercased_words():
    unknown = Lemmatiser("xx")
    assert not unknown.supported and unknown("Trips") == "trips"
    assert language_code("pt_BR") == "pt"


def test_stop_words_and_punctuation_are_not_content():
    stops = frozenset({"the"})
    assert not is_content(Token("The", 0, 3, "the"), stops, True)
    assert not is_content(Token(",", 0, 1, ","), stops, True)
    assert not is_content(Token("42", 0, 2, "42"), stops, True)
    assert is_content(Token("trip", 0, 4, "trip"), stops, True)
    # Without exclusion, stop words count but punctuation still does not.
    assert is_content(Token("The", 0, 3, "the"), stops, False)
    assert not is_content(Token(",", 0, 1, ","), stops, False)


# --- the entropy filter (App. B.1) ------------------------------------------------------------


def test_conditional_probabilities_and_entropy_as_the_paper_writes_them():
    assert conditional_probabilities([30, 10]) == [0.75, 0.25]
    assert entropy([50, 50]) == pytest.approx(math.log(2), abs=1e-15)
    expected = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert entropy([30, 10]) == pytest.approx(expected, abs=1e-15)
    assert entropy([7]) == 0.0
    with pytest.raises(ValueError):
        entropy([0, 0])


def _links(**sources: dict[str, int]) -> Counter:
    return Counter({(s, "", t): n for s, targets in sources.items() for t, n in targets.items()})


def test_each_filter_at_and_just_below_its_threshold():
    links = _links(
        ring={"anillo": 50, "cuadrilatero": 50},  # exactly at the count threshold: kept
        key={"llave": 60, "clave": 49},  # a variation seen 49 times: one variation left
        fan={"ventilador": 120},  # one variation only
        sheet={"sabana": 58, "hoja": 50},  # H = 0.69040: kept
        glass={"vaso": 59, "vidrio": 50},  # H = 0.68973: dropped
        rare={"raro": 3, "extraño": 2},  # nothing seen 50 times
    )
    concepts, stats = filter_concepts(links)
    assert {c.lemma: dict(c.variations) for c in concepts} == {
        "ring": {"anillo": 50, "cuadrilatero": 50},
        "sheet": {"sabana": 58, "hoja": 50},
    }
    assert stats.as_dict() == {
        "candidates": 6,
        "after_count_filter": 5,
        "after_variations_filter": 3,
        "after_entropy_filter": 2,
        "after_polysemy_filter": 2,
        "polysemy_filter": "off",
        "variations_kept": 4,
    }


def test_entropy_exactly_at_the_threshold_is_kept():
    counts = [58, 50]
    concepts, _ = filter_concepts(_links(sheet={"a": 58, "b": 50}), min_entropy=entropy(counts))
    assert [c.lemma for c in concepts] == ["sheet"]
    concepts, _ = filter_concepts(
        _links(sheet={"a": 58, "b": 50}), min_entropy=math.nextafter(entropy(counts), 1.0)
    )
    assert concepts == []


def test_entropy_is_over_the_variations_that_passed_the_count_filter():
    concepts, _ = filter_concepts(_links(trip={"viaje": 110, "recorrido": 100, "travesia": 49}))
    assert concepts[0].variations == [("viaje", 110), ("recorrido", 100)]
    assert concepts[0].entropy == pytest.approx(entropy([110, 100]), abs=1e-15)
    assert concepts[0].total_count == 210


def test_thresholds_are_parameters():
    links = _links(key={"llave": 60, "clave": 49})
    assert filter_concepts(links)[0] == []
    concepts, _ = filter_concepts(links, min_variation_count=49, min_entropy=0.6)
    assert [c.lemma for c in concepts] == ["key"]


def test_source_words_are_told_apart_by_pos():
    links = Counter({("fly", "VERB", "volar"): 60, ("fly", "NOUN", "mosca"): 60})
    links[("fly", "NOUN", "bragueta")] = 60
    concepts, _ = filter_concepts(links)
    assert [(c.lemma, c.pos) for c in concepts] == [("fly", "NOUN")]


class DropRarest:
    name = "drop-rarest"

    def keep(self, concept: ConceptCandidate) -> list[str]:
        return [t for t, _ in concept.variations[:-1]]


def test_a_plugged_in_polysemy_filter_drops_variations_then_rechecks_the_count():
    links = _links(
        trip={"viaje": 100, "recorrido": 100, "travesia": 100}, bank={"banco": 80, "orilla": 80}
    )
    concepts, stats = filter_concepts(links, polysemy=DropRarest())
    assert {c.lemma: len(c.variations) for c in concepts} == {"trip": 2}
    assert stats.polysemy_filter == "drop-rarest"
    assert (stats.after_entropy_filter, stats.after_polysemy_filter) == (2, 1)


# --- counts and examples ----------------------------------------------------------------------


def test_counts_round_trip_through_bytes():
    counts = MiningCounts(
        links=Counter({("trip", "", "viaje"): 3, ("bank", "NOUN", "orilla"): 1}),
        surfaces=Counter({("viaje", "viajes"): 2, ("viaje", "viaje"): 1}),
        pairs_read=7,
        pairs_aligned=6,
    )
    again = MiningCounts.from_bytes(counts.to_bytes())
    assert again == counts
    assert again.surface_forms("viaje") == [("viajes", 2), ("viaje", 1)]
    assert MiningCounts.from_bytes(b"") == MiningCounts()


def _tokens(lemmatiser: Lemmatiser, text: str) -> list[Token]:
    return lemmatiser.tokens(text)


def test_examples_keep_the_longest_under_the_token_limit_per_variation():
    en, es = Lemmatiser("en"), Lemmatiser("es")
    collector = ExampleCollector(
        {("trip", ""): ["viaje", "recorrido"]}, max_examples=2, token_limit=7, pos_used=False
    )
    sentences = [
        (1, "A trip.", "Un viaje."),
        (2, "A long trip here.", "Un largo viaje aquí."),
        (3, "A very long trip here.", "Un muy largo viaje aquí."),
        (4, "A much too long trip right here.", "Un viaje demasiado largo aquí."),  # 8 tokens
        (5, "Our museum trip.", "Nuestro recorrido del museo."),
        (6, "The trip both ways.", "El viaje y el recorrido."),  # two variations: ambiguous
        (7, "Another long trip here.", "Otro largo viaje aquí."),
    ]
    for pair, src, tgt in sentences:
        collector.add(pair, _tokens(en, src), _tokens(es, tgt))
    viaje = collector.examples("trip", "", "viaje")
    # Tokens count punctuation: pair 3 has 6, pairs 2 and 7 have 5 (the earlier one wins).
    assert [e.pair for e in viaje] == [3, 2]
    src, tgt = sentences[2][1], sentences[2][2]
    assert src[viaje[0].src_start : viaje[0].src_end] == "trip"
    assert tgt[viaje[0].tgt_start : viaje[0].tgt_end] == "viaje"
    assert [e.pair for e in collector.examples("trip", "", "recorrido")] == [5]
    again = ExampleCollector(collector.concepts, max_examples=2, token_limit=7, pos_used=False)
    again.load_bytes(collector.to_bytes())
    assert again.examples("trip", "", "viaje") == viaje


def _oracle(src: list[list[str]], tgt: list[list[str]]) -> list[list[tuple[int, int]]]:
    """Word-for-word pairs align on the diagonal."""
    return [[(i, i) for i in range(min(len(s), len(t)))] for s, t in zip(src, tgt, strict=True)]


def test_counting_skips_stop_words_punctuation_and_empty_sides():
    miner = Miner("en", "es", MiningParams(stopword_top_n=50), aligner=_oracle)
    counts = MiningCounts()
    miner.count_chunk([(1, "The trips .", "El viajes ."), (2, "", "vacío"), (3, "x", "")], counts)
    assert counts.links == Counter({("trip", "", "viaje"): 1})
    assert counts.surfaces == Counter({("viaje", "viajes"): 1})
    assert (counts.pairs_read, counts.pairs_aligned) == (3, 1)


def test_chunked_streams_in_fixed_sizes():
    assert [len(c) for c in chunked(((i, "a", "b") for i in range(7)), 3)] == [3, 3, 1]
