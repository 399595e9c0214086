"""The engine page's Test button (services.check_engine) on replay data and crowds of it."""

from __future__ import annotations

import pytest

from engines.interfaces import EngineError
from engines.models import EngineCall
from engines.registry import resolve
from engines.services import check_engine, register_replay, save_engine
from tests.engines.factories import ReplayEngineFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def replay_crowd(db):
    replay = ReplayEngineFactory(
        name="replay", params={"system": "A"}, capabilities=["translate", "quality", "difficulty"]
    )
    register_replay(
        replay,
        [{"source": "Hello", "system": "A", "translation": "Ahoj", "score": 90}],
        src_lang="en",
        tgt_lang="cs",
    )
    return save_engine(
        {"name": "crowd", "kind": "artificial_crowd", "capabilities": ["difficulty"],
         "params": {"translators": ["replay"], "quality_estimators": ["replay"]}}
    )  # fmt: skip


def test_a_crowd_of_replay_engines_passes_its_test_on_their_data(replay_crowd):
    result = check_engine(replay_crowd)

    assert result.ok, result.error
    assert result.sample == "en→cs: Hello"
    assert result.output == "quality-like 90"
    assert not EngineCall.objects.exclude(error="").exists()


def test_the_test_button_of_a_replay_crowd_shows_its_output(admin_client, replay_crowd):
    response = admin_client.post("/engines/crowd/test/", headers={"HX-Request": "true"})

    assert response.status_code == 200
    assert "quality-like 90" in response.content.decode()
    assert not EngineCall.objects.exclude(error="").exists()


def test_a_crowd_member_failure_names_the_crowd_and_the_member(replay_crowd):
    with pytest.raises(EngineError) as error:
        resolve(replay_crowd, "difficulty").estimate(["Good night"], "en", "cs")

    assert str(error.value) == (
        "artificial crowd crowd: translator replay failed: replay engine replay has no "
        "translation by A for en-cs text 'Good night'"
    )
    failed = EngineCall.objects.exclude(error="").values_list("engine__name", "error")
    assert sorted(name for name, _ in failed) == ["crowd", "replay"]
