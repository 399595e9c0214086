"""Example selections through the service, the command, the page, the API and the demo."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from lexical.concepts import services
from lexical.concepts.demo import create_selection_for_demo
from lexical.concepts.selection import SelectionParams
from lexical.models import Concept, ExampleSelection, MiningJob, SelectedExample
from tests.lexical.factories import MiningJobFactory, concept_with_variations

pytestmark = pytest.mark.django_db


@pytest.fixture
def job():
    job = MiningJobFactory()
    for i in range(4):
        concept_with_variations(
            {f"a{i}": 50, f"b{i}": 40 + i}, examples={f"a{i}": 8, f"b{i}": 3}, mining_job=job
        )
    return job


def _selected(selection: ExampleSelection) -> list[tuple[int, int]]:
    rows = SelectedExample.objects.filter(selection=selection).order_by("position")
    return list(rows.values_list("position", "example_id"))


def test_service_stores_seed_params_and_examples(job):
    concepts = list(job.concepts.all())
    selection = services.create_example_selection(concepts, name="study", seed=11)
    assert (selection.src_lang, selection.tgt_lang, selection.seed) == ("en", "es", 11)
    assert selection.concepts.count() == 4
    rows = _selected(selection)
    assert [p for p, _ in rows] == list(range(1, 41))
    for concept in concepts:
        chosen = SelectedExample.objects.filter(selection=selection, example__concept=concept)
        assert chosen.count() == 10
        assert {s.example.variation_id for s in chosen} == set(
            concept.variations.values_list("id", flat=True)
        )
    assert selection.params["uniformity_filter_applied"] is False
    assert selection.params["max_concepts"] == 20 and selection.params["skipped"] == {}


def test_same_seed_reproduces_the_selection(job):
    concepts = list(job.concepts.all())
    params = SelectionParams(max_concepts=2, pairs_per_concept=4)
    first = services.create_example_selection(concepts, name="a", seed=5, params=params)
    again = services.create_example_selection(concepts[::-1], name="b", seed=5, params=params)
    assert _selected(first) == _selected(again)
    assert set(first.concepts.all()) == set(again.concepts.all())


def test_random_seed_is_stored_and_reproduces(job):
    concepts = list(job.concepts.all())
    params = SelectionParams(max_concepts=2, pairs_per_concept=4)
    first = services.create_example_selection(concepts, name="a", params=params)
    again = services.create_example_selection(concepts, name="b", seed=first.seed, params=params)
    assert 0 <= first.seed < 2**63 and _selected(first) == _selected(again)


def test_dropped_variations_and_rejected_concepts_are_left_out(job):
    concepts = list(job.concepts.order_by("id"))
    services.reject_concept(concepts[0])
    dropped = concepts[1].variations.first()
    services.drop_variation(concepts[1], dropped.pk)
    selection = services.create_example_selection(
        Concept.objects.filter(mining_job=job), name="s", seed=1
    )
    assert set(selection.concepts.values_list("id", flat=True)) == {c.pk for c in concepts[2:]}
    assert selection.params["skipped"] == {
        str(concepts[1].pk): "1 variation(s); a concept needs at least 2"
    }
    assert selection.params["offered"] == 3


def test_refusals_write_nothing(job):
    other = concept_with_variations({"x": 5, "y": 5}, examples=1, tgt_lang="af", mining_job=None)
    with pytest.raises(services.SelectionError, match="several language pairs"):
        services.create_example_selection([*job.concepts.all(), other], name="s", seed=1)
    without_examples = concept_with_variations({"x": 5, "y": 5}, examples=0)
    with pytest.raises(services.SelectionError, match="no concept qualifies") as caught:
        services.create_example_selection([without_examples], name="s", seed=1)
    assert "have no example sentence" in str(caught.value)
    with pytest.raises(services.SelectionError, match="name"):
        services.create_example_selection(job.concepts.all(), name=" ", seed=1)
    with pytest.raises(services.SelectionError, match="seed"):
        services.create_example_selection(job.concepts.all(), name="s", seed=-1)
    assert ExampleSelection.objects.count() == 0


def test_command(job):
    out = io.StringIO()
    call_command(
        "select_lexical_examples", "--name", "cli", "--mining-job", job.pk, "--seed", "9",
        "--max-concepts", "3", stdout=out,
    )  # fmt: skip
    selection = ExampleSelection.objects.get()
    assert "3 concepts, 30 examples" in out.getvalue() and selection.seed == 9
    assert selection.params["uniformity_filter_applied"] is True
    with pytest.raises(CommandError, match="nothing was written: there is no concept #999"):
        call_command("select_lexical_examples", "--name", "x", "--concepts", "999")
    with pytest.raises(CommandError, match="not both"):
        call_command(
            "select_lexical_examples", "--name", "x", "--mining-job", job.pk, "--concepts", "1"
        )
    with pytest.raises(CommandError, match="comma-separated ids"):
        call_command("select_lexical_examples", "--name", "x", "--concepts", "1,a")
    with pytest.raises(CommandError, match="tolerance"):
        call_command(
            "select_lexical_examples", "--name", "x", "--mining-job", job.pk, "--tolerance", "nan"
        )
    assert ExampleSelection.objects.count() == 1


def test_page_form_creates_and_shows_a_selection(admin_client, job):
    response = admin_client.post(
        reverse("lexical:selection_create"),
        {"name": "ui", "mining_job": job.pk, "seed": "", "max_concepts": 20,
         "pairs_per_concept": 10, "tolerance": 0.2},
    )  # fmt: skip
    selection = ExampleSelection.objects.get()
    assert response.status_code == 302
    page = admin_client.get(response["Location"]).content.decode()
    assert f"seed <code>{selection.seed}</code>" in page and "40 examples" in page
    assert page.count("<mark>") == 80  # source word and variation marked in each pair
    home = admin_client.get(reverse("lexical:home")).content.decode()
    assert "ui" in home and reverse("lexical:selection_detail", args=[selection.pk]) in home


def test_page_form_errors(admin_client, job):
    url = reverse("lexical:selection_create")
    base = {"name": "ui", "max_concepts": 20, "pairs_per_concept": 10, "tolerance": 0.2}
    response = admin_client.post(url, base)
    assert (
        response.status_code == 400
        and "Choose a mining job or list concept ids." in response.content.decode()
    )
    response = admin_client.post(url, {**base, "concepts": "1, x"})
    assert "&#x27;x&#x27; is not a concept id" in response.content.decode()
    response = admin_client.post(url, {**base, "mining_job": 999})
    assert "Select a valid choice. 999 is not one of the available choices." in (
        response.content.decode()
    )
    assert ExampleSelection.objects.count() == 0
    prefilled = admin_client.get(url + f"?mining_job={job.pk}").content.decode()
    assert f'<option value="{job.pk}" selected>' in prefilled


def test_the_page_picks_a_finished_mining_job_by_name(admin_client, job):
    running = MiningJobFactory(status=MiningJob.Status.RUNNING)
    page = admin_client.get(reverse("lexical:selection_create")).content.decode()
    select = re.search(r'<select name="mining_job"[^>]*>(.*?)</select>', page, re.S).group(1)
    options = re.findall(r'<option value="(\d*)"[^>]*>([^<]*)</option>', select)
    corpus = job.corpus
    assert options == [
        ("", "— or list concept ids below —"),
        (str(job.pk), f"#{job.pk} {corpus.name} ({corpus.src_lang}→{corpus.tgt_lang}, "
                      "4 active concepts)"),
    ]  # fmt: skip
    assert str(running.pk) not in [value for value, _ in options]


def test_api(admin_client, job):
    url = reverse("lexical-selection-list")
    ids = list(job.concepts.values_list("id", flat=True))
    response = admin_client.post(
        url, {"name": "api", "concepts": ids, "seed": 3, "pairs_per_concept": 4},
        content_type="application/json",
    )  # fmt: skip
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["seed"] == 3 and len(body["examples"]) == 16
    first = body["examples"][0]
    assert first["position"] == 1 and first["concept"] in ids and first["variation"]
    bad = admin_client.post(
        url, {"name": "api", "concepts": [999]}, content_type="application/json"
    )
    assert bad.status_code == 400 and "no concept #999" in bad.json()["errors"]["concepts"][0]
    nan = admin_client.post(
        url, '{"name": "x", "mining_job": 1, "tolerance": NaN}', content_type="application/json"
    )
    assert nan.status_code == 400
    assert admin_client.get(url).json()["count"] == 1


def test_api_and_pages_are_staff_only(annotator_client, job):
    assert annotator_client.get(reverse("lexical-selection-list")).status_code == 403
    assert annotator_client.get(reverse("lexical:selection_create")).status_code == 302


def test_demo_selection_is_idempotent(job):
    first = create_selection_for_demo(job)
    assert first is not None and first.selected.count() == 40
    assert create_selection_for_demo(job) == first
    assert ExampleSelection.objects.count() == 1
