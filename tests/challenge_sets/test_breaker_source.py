"""Items from MT-breaker runs: page form and API, the frozen provenance of a chain, refusals of
runs that are unknown or still running (nothing written), near-duplicates, permissions."""

from __future__ import annotations

import pytest
from django.urls import reverse

from challenge_sets import sources
from challenge_sets.models import AuditEntry, ChallengeItem
from search.breaker.prompts import PROMPT_VERSION
from search.breaker.services import run_in_foreground, start_breaker_comparison, start_breaker_run
from search.models import BreakerChain, BreakerRun, BreakerStep
from tests.challenge_sets.conftest import make_set
from tests.factories import UserFactory
from tests.search.breaker_helpers import SEED_TEXTS, jsonl_seeds, offline_config

pytestmark = pytest.mark.django_db

FRAGILE = {"name": "sim-fragile-mt", "kind": "fragile_mt", "model": "", "params": {}}
QE = {"name": "sim-qe", "kind": "fragile_qe", "model": "", "params": {}}
EDITOR = {"name": "sim-editor", "kind": "breaker_editor", "model": "", "params": {}}


@pytest.fixture
def finished_run():
    return run_in_foreground(start_breaker_run(offline_config(n_steps=3), enqueue=False).pk)


def _state(challenge_set):
    return (
        list(
            ChallengeItem.objects.filter(challenge_set=challenge_set).values_list("pk", flat=True)
        ),
        AuditEntry.objects.filter(challenge_set=challenge_set).count(),
    )


def _expected_provenance(run: BreakerRun, chain: BreakerChain) -> dict:
    steps = list(BreakerStep.objects.filter(chain=chain).order_by("index"))
    line = SEED_TEXTS.index(chain.seed_text)
    seed_ref = {"origin": "jsonl", "file": "seeds.jsonl", "line": line + 1,
                "source_url": f"https://example.org/{line}", "doc_id": f"d{line}"}  # fmt: skip
    selected = steps[chain.selected_step]
    return {
        "kind": "breaker_run",
        "run": {
            "id": run.pk, "name": "Offline breaker_seeded", "comparison": "",
            "method": "breaker_seeded", "method_label": "MT-breaker (seeded)",
            "status": "finished",
            "config": {"n_steps": 3, "k_generations": 10, "max_edit_share": 0.75,
                       "target_words": 13, "max_parse_attempts": 3, "history_batch": 5,
                       "seed": 3, "seeds_from": run.seeds_from, "src_lang": "en",
                       "tgt_lang": "cs", "budget_money": None},
            "engines": {"llm": EDITOR, "targets": [FRAGILE], "qe": [QE]},
            "cost": "0.00000000",
            "finished_at": run.finished_at.isoformat(),
        },
        "chain": {"index": chain.index, "status": "done", "target_words": chain.target_words,
                  "steps_done": 4},
        "selected_step": chain.selected_step,
        "steps": [
            {"step": s.index, "source": s.source, "translations": s.translations, "qe": s.qe,
             "quality": s.quality, "edit_share": s.edit_share, "parse_attempts": s.parse_attempts,
             "words": s.word_count}
            for s in steps
        ],
        "seed_text": chain.seed_text,
        "seed_ref": seed_ref,
        "source_url": seed_ref["source_url"],
        "doc_id": seed_ref["doc_id"],
        "prompt_version": PROMPT_VERSION,
        "automatic_scores": {"quality": selected.quality,
                             "difficulty": round(100 - selected.quality, 6), "qe": selected.qe},
        "text_sha256": ChallengeItem.objects.get(source=chain.selected_text).provenance[
            "text_sha256"],
    }  # fmt: skip


def test_the_page_form_adds_every_selected_text_with_its_whole_chain(curator_client, finished_run):
    challenge_set = make_set(rows=[])
    response = curator_client.post(
        reverse("challenge_sets:add_from_source", args=[challenge_set.pk, "breaker_run"]),
        {"breaker_run-run": str(finished_run.pk), "breaker_run-comparison": ""},
    )
    assert response.status_code == 302
    label = f"#{finished_run.pk} Offline breaker_seeded (MT-breaker (seeded), finished)"
    assert (str(finished_run.pk), label) in sources.get("breaker_run").choices("run")
    items = list(ChallengeItem.objects.filter(challenge_set=challenge_set).order_by("id"))
    chains = list(finished_run.chains.order_by("index"))
    assert [i.origin_ref for i in items] == [
        f"breaker:{finished_run.pk}:chain:{c.index}" for c in chains
    ]
    for item, chain in zip(items, chains, strict=True):
        selected = chain.steps.get(index=chain.selected_step)
        assert (item.origin, item.source, item.src_lang, item.tgt_lang) == (
            "breaker_run", chain.selected_text, "en", "cs")  # fmt: skip
        assert (
            item.translations
            == selected.translations
            == {"sim-fragile-mt": selected.translations["sim-fragile-mt"]}
        )
        assert item.automatic_difficulty == pytest.approx(100 - chain.selected_quality)
        assert item.provenance == _expected_provenance(finished_run, chain)
    # The item page shows the frozen chain step by step, the selected step marked.
    chain = chains[0]
    page = curator_client.get(
        reverse("challenge_sets:item_detail", args=[challenge_set.pk, items[0].pk])
    ).content.decode()
    assert "MT-breaker chain (frozen)" in page
    assert page.count('class="cs-selected"') == 1 and page.count('<td lang="en">') == 4
    assert reverse("search:breaker_chain", args=[finished_run.pk, chain.index]) in page
    # Frozen: later changes to the run do not reach the snapshot.
    BreakerRun.objects.filter(pk=finished_run.pk).update(name="renamed", n_steps=99)
    items[0].refresh_from_db()
    assert items[0].provenance["run"]["name"] == "Offline breaker_seeded"
    assert items[0].provenance["run"]["config"]["n_steps"] == 3


def test_the_api_adds_a_comparison_and_the_hardest_per_run(curator_client):
    config = {**offline_config(), "name": "Cmp", "methods": ["seeds", "breaker_seeded_qe"],
              "n_steps": 2}  # fmt: skip
    runs = [run_in_foreground(r.pk) for r in start_breaker_comparison(config, enqueue=False)]
    challenge_set = make_set(rows=[])
    url = f"/api/challenge-sets/{challenge_set.pk}/items/"
    body = {"source": "breaker_run", "params": {"comparison": "Cmp", "hardest": 2}}
    response = curator_client.post(url, body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["added"] == 4
    for run in runs:
        hardest = sorted(run.chains.all(), key=lambda c: (c.selected_quality, c.index))[:2]
        refs = set(
            ChallengeItem.objects.filter(origin_ref__startswith=f"breaker:{run.pk}:").values_list(
                "origin_ref", flat=True
            )
        )
        assert refs == {f"breaker:{run.pk}:chain:{c.index}" for c in hardest}
    item = ChallengeItem.objects.filter(origin_ref__startswith=f"breaker:{runs[1].pk}:").first()
    assert item.provenance["run"]["comparison"] == "Cmp"
    assert item.provenance["run"]["method"] == "breaker_seeded_qe"
    listed = curator_client.get(url + "?origin=breaker_run").json()
    assert listed["count"] == 4
    again = curator_client.post(url, body, content_type="application/json").json()
    assert (again["added"], again["skipped"]) == (0, 4)
    # The form's choices name each run once (a comparison's run names carry the method).
    source = sources.get("breaker_run")
    assert source.choices("comparison") == [("", "—"), ("Cmp", "Cmp")]
    assert (str(runs[0].pk), f"#{runs[0].pk} Cmp · Seeds (finished)") in source.choices("run")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"run": 999999}, "no MT-breaker run #999999"),
        ({"comparison": "Nope"}, "no MT-breaker comparison named 'Nope'"),
        ({}, "choose one MT-breaker run or one comparison"),
        ({"run": "x"}, "run must be a whole number"),
    ],
)
def test_unknown_runs_are_refused_with_a_400_and_nothing_written(
    curator_client, finished_run, params, message
):
    challenge_set = make_set(rows=[])
    before = _state(challenge_set)
    response = curator_client.post(
        f"/api/challenge-sets/{challenge_set.pk}/items/",
        {"source": "breaker_run", "params": params},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [message]
    assert _state(challenge_set) == before


def test_an_unfinished_run_is_refused_on_the_page_and_the_api(curator_client):
    queued = start_breaker_run(offline_config(name="Still going"), enqueue=False)
    challenge_set = make_set(rows=[])
    before = _state(challenge_set)
    message = (
        f"MT-breaker run #{queued.pk} 'Still going' is queued: add its texts once it has finished"
    )
    page = curator_client.post(
        reverse("challenge_sets:add_from_source", args=[challenge_set.pk, "breaker_run"]),
        {"breaker_run-run": str(queued.pk)},
    )
    assert page.status_code == 400
    html = page.content.decode()
    assert "Nothing was added" in html and message.replace("'", "&#x27;") in html
    api = curator_client.post(
        f"/api/challenge-sets/{challenge_set.pk}/items/",
        {"source": "breaker_run", "params": {"run": queued.pk}},
        content_type="application/json",
    )
    assert api.status_code == 400 and api.json()["errors"] == [message]
    assert _state(challenge_set) == before


def test_near_copies_among_a_runs_texts_are_flagged(curator_client):
    texts = [SEED_TEXTS[0], SEED_TEXTS[0].replace("every morning", "each morning"), SEED_TEXTS[1]]
    run = run_in_foreground(
        start_breaker_run(offline_config("seeds", seeds=jsonl_seeds(texts)), enqueue=False).pk
    )
    challenge_set = make_set(rows=[])
    response = curator_client.post(
        f"/api/challenge-sets/{challenge_set.pk}/items/",
        {"source": "breaker_run", "params": {"run": run.pk}},
        content_type="application/json",
    )
    assert response.json() == {"added": 3, "skipped": 0, "near_duplicates": 1}
    items = {i.source: i for i in ChallengeItem.objects.filter(challenge_set=challenge_set)}
    copy = items[texts[1]]
    assert copy.duplicate_of == items[texts[0]] and copy.similarity > 0.8
    assert items[texts[2]].duplicate_of is None


@pytest.mark.parametrize("who", ["annotator", "outsider", "staff_without_permission"])
def test_only_curators_add_from_a_breaker_run(client, finished_run, who):
    challenge_set = make_set(rows=[])
    client.force_login(UserFactory(username=who, is_staff=who.startswith("staff")))
    before = _state(challenge_set)
    page = client.post(
        reverse("challenge_sets:add_from_source", args=[challenge_set.pk, "breaker_run"]),
        {"breaker_run-run": str(finished_run.pk)},
    )
    api = client.post(
        f"/api/challenge-sets/{challenge_set.pk}/items/",
        {"source": "breaker_run", "params": {"run": finished_run.pk}},
        content_type="application/json",
    )
    assert (page.status_code, api.status_code) == (404, 403)
    assert _state(challenge_set) == before
