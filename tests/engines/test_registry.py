"""engines.registry: every kind is registered, its adapter serves what the kind promises, and
``resolve`` refuses what an engine cannot be."""

from __future__ import annotations

import inspect

import pytest

from engines.interfaces import INTERFACES, EngineError
from engines.kinds import KIND_CAPABILITIES
from engines.models import Engine
from engines.registry import ADAPTERS, adapter_class, refusal, resolve
from tests.engines.factories import HeuristicEngineFactory, SyntheticEngineFactory


def _methods(protocol: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(protocol, inspect.isfunction)}


def test_every_kind_has_an_adapter_serving_each_capability_it_may_list():
    assert set(ADAPTERS) == set(KIND_CAPABILITIES) == set(Engine.Kind.values)
    for kind, capabilities in KIND_CAPABILITIES.items():
        cls = adapter_class(kind)
        for capability in capabilities:
            missing = {m for m in _methods(INTERFACES[capability]) if not hasattr(cls, m)}
            assert not missing, f"{kind} lists {capability} but lacks {missing}"


@pytest.mark.django_db
def test_the_world_of_a_synthetic_engine_outlives_its_disabling_and_only_it_has_one():
    SyntheticEngineFactory(name="syn", params={"n_topics": 30, "seed": 2}, enabled=False)
    HeuristicEngineFactory(name="length")

    assert resolve("syn", "world").n_topics == 30
    with pytest.raises(EngineError, match="engine length is not synthetic") as info:
        resolve("length", "world")
    assert info.value.permanent


@pytest.mark.django_db
def test_an_unknown_capability_is_a_permanent_refusal_naming_the_known_ones():
    HeuristicEngineFactory(name="length")

    with pytest.raises(EngineError, match=r"no capability 'qe' .*quality") as info:
        resolve("length", "qe")
    assert info.value.permanent


def test_a_refusal_names_the_first_thing_that_stops_an_engine():
    length = Engine(name="length", kind="heuristic", capabilities=["difficulty"], enabled=True)
    off = Engine(name="off", kind="heuristic", capabilities=["difficulty"], enabled=False)

    assert refusal(None, "nope", "chat") == "there is no engine named 'nope'"
    assert refusal(off, "off", "chat") == "engine off is disabled"
    assert refusal(length, "length", "chat") == "engine length is not configured as a chat model"
    assert refusal(length, "length", "difficulty") is None
