"""heuristic, synthetic, replay and artificial_crowd kinds, and ledger totals per scope."""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from engines.interfaces import CrowdResult, EngineError
from engines.models import Engine, EngineCall
from engines.offline.synthetic_world import SyntheticWorld
from engines.registry import resolve
from engines.selectors import cost_by_scope, totals_by_engine
from engines.services import register_replay, save_engine
from tests.engines.factories import (
    EngineFactory,
    HeuristicEngineFactory,
    ReplayEngineFactory,
    SyntheticEngineFactory,
)
from tests.engines.fake_openai import Reply

pytestmark = pytest.mark.django_db


# --- heuristic -------------------------------------------------------------------------------


def test_heuristics_are_quality_like_and_recorded(db):
    HeuristicEngineFactory(name="length", params={"feature": "tokens"})
    HeuristicEngineFactory(name="rarity", params={"feature": "rarity"})
    texts = ["A short one.", "A considerably longer sentence with several more words in it."]

    lengths = resolve("length", "difficulty", scope="eval:1").estimate(texts, "en")
    rarity = resolve("rarity", "difficulty", scope="eval:1").estimate(texts, "en")

    assert lengths == [-3.0, -10.0]  # longer = harder = lower
    assert all(0 < value < 1 for value in rarity)
    assert resolve("length", "difficulty").on_0_100_scale is False
    rows = EngineCall.objects.filter(scope="eval:1").order_by("id")
    assert [(r.engine.name, r.operation, r.items, r.cost) for r in rows] == [
        ("length", "estimate", 2, Decimal(0)),
        ("rarity", "estimate", 2, Decimal(0)),
    ]


def test_syntax_heuristic_says_unavailable_and_records_the_error(db):
    HeuristicEngineFactory(name="depth", params={"feature": "syntax_depth"})

    with pytest.raises(EngineError, match="spaCy") as info:
        resolve("depth", "difficulty").estimate(["A sentence."], "xx-none")

    assert info.value.permanent
    assert "spaCy" in EngineCall.objects.get().error


# --- synthetic ------------------------------------------------------------------------------


def test_synthetic_quality_is_100_minus_the_worlds_difficulty(db):
    engine = SyntheticEngineFactory(name="syn", params={"n_topics": 50, "seed": 7})
    ids = ["synthetic:3:0", "synthetic:3:1", "synthetic:49:12"]

    first = resolve(engine, "difficulty").estimate(ids, "en")
    again = resolve("syn", "difficulty").estimate(list(reversed(ids)), "en")

    world = SyntheticWorld(n_topics=50, seed=7)
    expected = 100.0 - world.difficulty_of(np.array([3, 3, 49]), np.array([0, 1, 12]))
    assert first == pytest.approx(expected.tolist())
    assert again == list(reversed(first))  # replayable, whatever the order
    assert resolve("syn", "world") == world


@pytest.mark.parametrize("bad", ["synthetic:50:0", "synthetic:x:1", "some real text"])
def test_synthetic_rejects_ids_it_does_not_know(db, bad):
    SyntheticEngineFactory(name="syn", params={"n_topics": 50, "seed": 7})

    with pytest.raises(EngineError) as info:
        resolve("syn", "difficulty").estimate(["synthetic:1:1", bad])

    assert info.value.permanent
    assert repr(bad)[1:20] in info.value.message


def test_synthetic_params_are_validated(db):
    engine = SyntheticEngineFactory.build(
        name="bad-syn", params={"n_topics": 10, "weights": [0.5, 0.6], "locs": [1, 2],
                                "scales": [1, 1]}
    )  # fmt: skip
    with pytest.raises(ValidationError, match="probability"):
        engine.full_clean()


# --- replay ---------------------------------------------------------------------------------


@pytest.fixture
def replay(db):
    engine = ReplayEngineFactory(name="replay", params={"system": "A"})
    register_replay(
        engine,
        [
            {"source": "Hello", "system": "A", "translation": "Ahoj", "score": 90},
            {"source": "Hello", "system": "B", "translation": "Nazdar", "score": 70},
            {"source": "Bye", "system": "A", "translation": "Čau", "score": 40},
            {"source": "Bye", "system": "B", "translation": "Sbohem", "score": 60.5},
        ],
        src_lang="en",
        tgt_lang="cs",
    )
    return engine


def test_replay_answers_translate_score_and_estimate(replay):
    assert resolve("replay", "translate").translate(["Bye", "Hello"], "en", "cs") == ["Čau", "Ahoj"]
    assert resolve("replay", "quality").score(
        [("Hello", "Nazdar"), ("Bye", "Čau")], "en", "cs"
    ) == [70.0, 40.0]
    replay.params = {}
    replay.save()
    assert resolve("replay", "difficulty").estimate(["Hello", "Bye"], "en", "cs") == [
        80.0,
        50.25,
    ]


def test_replay_missing_entry_is_a_permanent_error_naming_the_text(replay):
    with pytest.raises(EngineError, match="'Good night'") as info:
        resolve("replay", "translate").translate(["Hello", "Good night"], "en", "cs")
    assert info.value.permanent
    with pytest.raises(EngineError, match="no score"):
        resolve("replay", "quality").score([("Hello", "Zdravím")], "en", "cs")
    with pytest.raises(EngineError, match="en-de"):
        resolve("replay", "difficulty").estimate(["Hello"], "en", "de")


def test_replay_with_several_systems_needs_one_named_for_translation(replay):
    replay.params = {}
    replay.save()
    with pytest.raises(EngineError, match=r"set params\.system"):
        resolve("replay", "translate").translate(["Hello"], "en", "cs")


def test_register_replay_upserts_and_validates_atomically(replay):
    register_replay(
        replay, [{"source": "Hello", "system": "A", "translation": "Ahojky", "score": 95}],
        src_lang="en", tgt_lang="cs",
    )  # fmt: skip
    assert resolve("replay", "translate").translate(["Hello"], "en", "cs") == ["Ahojky"]
    assert replay.replay_entries.count() == 4

    with pytest.raises(ValueError, match="row 2: score 120"):
        register_replay(
            replay,
            [{"source": "New", "system": "A", "translation": "Nový", "score": 50},
             {"source": "Newer", "system": "A", "translation": "x", "score": 120}],
            src_lang="en", tgt_lang="cs",
        )  # fmt: skip
    assert replay.replay_entries.count() == 4


def test_replay_of_the_real_wmt24_data(db, shared_data):
    engine = ReplayEngineFactory(name="wmt", params={"system": "GPT-4"})
    lines = [json.loads(line) for line in (shared_data / "wmt24_esa_en-cs.jsonl").open()][:20]
    rows = [
        {"source": item["src"], "system": system, "translation": text,
         "score": item["scores"].get(system)}
        for item in lines for system, text in item["tgt"].items()
    ]  # fmt: skip
    register_replay(engine, rows, src_lang="en", tgt_lang="cs")
    sources = [item["src"] for item in lines]

    assert resolve(engine, "translate").translate(sources, "en", "cs") == [
        item["tgt"]["GPT-4"] for item in lines
    ]
    engine.params = {"systems": ["GPT-4", "IKUN"]}
    engine.save()
    estimates = resolve(engine, "difficulty").estimate(sources, "en", "cs")
    assert estimates == pytest.approx(
        [(item["scores"]["GPT-4"] + item["scores"]["IKUN"]) / 2 for item in lines]
    )


# --- artificial crowd -----------------------------------------------------------------------


def test_artificial_crowd_averages_translators_times_estimators(db, fake_openai):
    EngineFactory(name="mt-a", model="model-a", base_url=fake_openai.base_url)
    EngineFactory(name="mt-b", model="model-b", base_url=fake_openai.base_url)
    EngineFactory(name="qe", model="judge", base_url=fake_openai.base_url,
                  price_in_per_1k=Decimal(1), price_out_per_1k=Decimal(0))  # fmt: skip
    crowd = save_engine(
        {"name": "crowd", "kind": "artificial_crowd", "capabilities": ["difficulty"],
         "params": {"translators": ["mt-a", "mt-b"], "quality_estimators": ["qe"]}}
    )  # fmt: skip
    texts = ["Hello there", "Hi"]

    detailed = resolve(crowd, "difficulty", scope="run:9").estimate_detailed(texts, "en", "cs")

    assert all(isinstance(result, CrowdResult) for result in detailed)
    first = detailed[0]
    assert first.translations == {"mt-a": "[xx] Hello there", "mt-b": "[xx] Hello there"}
    # auto_reply scores 40 + len(translation) % 61
    expected = 40 + len("[xx] Hello there") % 61
    assert first.scores == {("mt-a", "qe"): expected, ("mt-b", "qe"): expected}
    assert first.quality == expected and first.difficulty == 100 - expected
    assert resolve("crowd", "difficulty", scope="run:9").estimate(texts, "en", "cs") == [
        r.quality for r in detailed
    ]
    totals = cost_by_scope("run:9")
    # The crowd ran twice: the second run is answered from the cache. mt-a and mt-b produce
    # equal strings, so the QE pairs of mt-b are cache hits of mt-a's.
    assert totals["engines"]["mt-a"]["calls"] == 4
    assert totals["engines"]["mt-a"]["cache_hits"] == 2
    assert totals["engines"]["qe"]["calls"] == 8
    assert totals["engines"]["qe"]["tokens_in"] == 20  # two paid QE requests of 10 tokens
    assert totals["engines"]["qe"]["cost"] == Decimal("0.02")
    assert totals["engines"]["crowd"]["cost"] == Decimal(0)
    # Each translator paid 2 × (10 in × 0.5 + 5 out × 1.5) / 1000 = 0.025.
    assert totals["cost"] == Decimal("0.07")
    assert totals_by_engine("run:9").keys() == {"crowd", "mt-a", "mt-b", "qe"}


def test_crowd_needs_a_target_language_and_valid_members(db, fake_openai):
    EngineFactory(name="mt", base_url=fake_openai.base_url)
    HeuristicEngineFactory(name="length")
    with pytest.raises(ValidationError) as info:
        save_engine(
            {"name": "crowd", "kind": "artificial_crowd", "capabilities": ["difficulty"],
             "params": {"translators": ["mt", "ghost"], "quality_estimators": ["length"]}}
        )  # fmt: skip
    text = str(info.value)
    assert "ghost: there is no engine with that name" in text
    assert "length: that engine is not configured as a quality estimator" in text
    assert not Engine.objects.filter(name="crowd").exists()

    save_engine(
        {"name": "crowd", "kind": "artificial_crowd", "capabilities": ["difficulty"],
         "params": {"translators": ["mt"], "quality_estimators": ["mt"]}}
    )  # fmt: skip
    with pytest.raises(EngineError, match="target language"):
        resolve("crowd", "difficulty").estimate(["x"], "en")


def test_scope_totals_sum_over_engines_and_leave_other_scopes_out(db, fake_openai):
    EngineFactory(name="mt", base_url=fake_openai.base_url)
    fake_openai.push(Reply.translation("a", tokens_in=2000, tokens_out=1000))
    resolve("mt", "translate", scope="run:1").translate(["x"], "en", "de")
    resolve("mt", "translate", scope="run:2").translate(["y"], "en", "de")

    one = cost_by_scope("run:1")

    assert one["cost"] == Decimal("2.5")  # 2k in × 0.5 + 1k out × 1.5
    assert (one["calls"], one["requests"], one["cache_hits"], one["errors"]) == (1, 1, 0, 0)
    assert cost_by_scope("nothing")["cost"] == Decimal(0)
