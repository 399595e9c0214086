"""Bad input is a 4xx naming the line or field, with nothing written: never a server error.

One test per kind of bad input, through the interfaces that take it (API bodies, uploads,
management commands). Generated requests over the whole API are in ``test_api_fuzz.py``.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from rest_framework.test import APIClient

from annotation.item_refs import item_ref
from annotation.models import Campaign
from annotation.services.claims import next_item_for
from config.api import router
from core.api_parsers import StrictJSONParser
from difficulty.models import DifficultyDataset
from engines.models import Engine
from lexical.models import LexicalEvaluation, MiningJob, SelectionStudy
from search.models import BreakerRun, BreakerTransfer, SearchRun, TopicTree
from tests.annotation.factories import enrolled, esa_campaign
from tests.engines.factories import SyntheticEngineFactory
from tests.search.breaker_helpers import offline_config
from tests.search.conftest import queue_rounds_settle_in_place, synthetic_run_config
from tests.search.test_run_pages import form_data

pytestmark = pytest.mark.django_db

IMPORT = "/api/campaigns/import/"
JSON = "application/json"
ESA_LINE = {"doc_id": "d", "seg_id": "1", "source": "Hi", "target": "Ahoj"}


@pytest.fixture
def api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


@pytest.fixture(autouse=True)
def enqueued(monkeypatch):
    return queue_rounds_settle_in_place(monkeypatch)


@pytest.fixture
def world(db):
    return SyntheticEngineFactory(name="world", params={"n_topics": 50, "seed": 1})


def post_raw(api: APIClient, url: str, body: str):
    return api.generic("POST", url, body.encode("utf-8"), content_type="application/json")


def refused(response, status: int = 400) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["detail"], body
    return body


# --- JSON that Python reads but no database stores ------------------------------------------


@pytest.mark.parametrize(
    ("value", "named"),
    [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("1e400", "Infinity")],
)
def test_non_finite_numbers_in_an_api_body_are_refused(api, value, named):
    body = '{"name": "N", "protocol": "esa", "items": [{"source": "a", "meta": {"x": %s}}]}'
    response = post_raw(api, IMPORT, body % value)

    assert f"{named} at $.items[0].meta.x is not a JSON number" in refused(response)["detail"]
    assert Campaign.objects.count() == 0


JSON_ONLY_ENDPOINTS = {
    "/api/breaker-transfers/": BreakerTransfer,
    "/api/lexical-evaluations/": LexicalEvaluation,
    "/api/lexical-selection-studies/": SelectionStudy,
    "/api/lexical-mining-jobs/": MiningJob,
}


@pytest.mark.parametrize("url", JSON_ONLY_ENDPOINTS)
@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("[" * 10_000, "nested more than 64 levels deep"),
        ('{"name": "a\\u0000b"}', "text at $.name contains a NUL character"),
        ('{"name": "\\ud800"}', "text at $.name is not valid Unicode (a lone surrogate)"),
        ('{"name": "a", "name": "b"}', "duplicate key 'name'"),
    ],
)
def test_every_json_api_body_is_parsed_strictly(api, url, body, named):
    response = post_raw(api, url, body)

    assert refused(response)["detail"] == f"JSON parse error - {named}"
    assert JSON_ONLY_ENDPOINTS[url].objects.count() == 0


def test_no_api_view_parses_json_leniently():
    # The strict parser is the default (config/settings.py); a view naming its own parsers
    # must not bring DRF's lenient JSONParser back.
    lenient = []
    for pattern in router.urls:
        view = pattern.callback.cls(**pattern.callback.initkwargs)
        for parser in view.get_parsers():
            if "json" in parser.media_type and not isinstance(parser, StrictJSONParser):
                lenient.append(f"{pattern.pattern}: {type(parser).__name__}")
    assert lenient == []


def test_non_finite_numbers_in_an_imported_line_name_the_line(api):
    jsonl = json.dumps(ESA_LINE) + "\n" + '{"source": "a", "target": "b", "meta": {"x": NaN}}\n'
    response = api.post(IMPORT, {"name": "N", "protocol": "esa", "jsonl": jsonl}, format="json")

    body = refused(response)
    reason = "not valid JSON (NaN at $.meta.x is not a JSON number)"
    assert body["errors"] == [{"line": 2, "reason": reason}]
    assert Campaign.objects.count() == 0


def test_a_deeply_nested_api_body_is_a_400(api):
    response = post_raw(api, "/api/topic-trees/", '{"name": "Deep", "tree": ' + "[" * 50_000)

    assert "nested more than 64 levels deep" in refused(response)["detail"]
    assert TopicTree.objects.count() == 0


@pytest.mark.parametrize("nesting", [100, 50_000])
def test_a_deeply_nested_topic_tree_file_is_refused(api, nesting):
    upload = SimpleUploadedFile("deep.json", ('{"a": ' * nesting + "{}" + "}" * nesting).encode())
    response = api.post("/api/topic-trees/", {"name": "Deep", "file": upload}, format="multipart")

    assert "nested more than 64 levels deep" in refused(response)["detail"]
    assert TopicTree.objects.count() == 0


def test_a_deeply_nested_appraise_file_is_refused(api):
    upload = SimpleUploadedFile("batches.json", b"[" * 50_000)
    response = api.post(
        IMPORT,
        {"name": "Deep", "protocol": "esa", "file": upload, "format": "appraise"},
        format="multipart",
    )

    assert "nested more than 64 levels deep" in refused(response)["detail"]
    assert Campaign.objects.count() == 0


def test_deeply_nested_json_files_given_to_commands_are_refused(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 50_000)
    for command in ("run_search", "run_breaker", "import_engines"):
        with pytest.raises(CommandError, match="nested more than 64 levels deep"):
            call_command(command, str(path))
    assert (SearchRun.objects.count(), BreakerRun.objects.count(), Engine.objects.count()) == (
        0,
        0,
        0,
    )


def test_a_lone_surrogate_in_an_api_body_is_refused(api):
    response = post_raw(api, IMPORT, '{"name": "\\ud800", "protocol": "esa", "items": [{}]}')

    assert "lone surrogate" in refused(response)["detail"]
    assert Campaign.objects.count() == 0


def test_a_nul_character_in_an_api_body_is_refused(api):
    body = {"name": "Nul", "protocol": "esa", "items": [{"source": "a\u0000b", "target": "c"}]}
    response = post_raw(api, IMPORT, json.dumps(body))

    assert "NUL character" in refused(response)["detail"]
    assert Campaign.objects.count() == 0


def test_a_file_that_is_not_utf8_names_the_line(api):
    upload = SimpleUploadedFile("items.jsonl", json.dumps(ESA_LINE).encode() + b"\n\xff\xfe\n")
    response = api.post(
        IMPORT, {"name": "Bytes", "protocol": "esa", "file": upload}, format="multipart"
    )

    assert refused(response)["errors"] == [{"line": 2, "reason": "not valid UTF-8"}]
    assert Campaign.objects.count() == 0


def test_an_annotator_draft_with_nan_or_deep_nesting_is_refused_and_not_saved(client):
    campaign = esa_campaign(n_items=1)
    annotator = enrolled(campaign, "alice")
    item = next_item_for(annotator, campaign)
    client.force_login(annotator.user)
    url = f"/annotation/items/{item_ref(item.pk)}/draft/"
    for body in ('{"draft": {"score": NaN}}', '{"draft": ' + "[" * 50_000):
        response = client.post(url, body, content_type="application/json")
        assert response.status_code == 400
        assert response.json()["errors"] == ["the body must be a JSON object"]
    assert item.annotations.get().draft == {}


def test_the_run_form_refuses_nan_in_params(admin_client, world, enqueued):
    data = form_data(params='{"epsilon": NaN}')
    response = admin_client.post("/search/runs/new/", data)

    assert response.status_code == 400
    assert response.context["form"].errors["params"] == [
        "not valid JSON: NaN at $.epsilon is not a JSON number"
    ]
    assert SearchRun.objects.count() == 0


# --- Duplicates are refused, never merged ---------------------------------------------------


def test_duplicate_json_keys_in_a_topic_tree_are_refused(api):
    body = '{"name": "Dup", "tree": {"Law": {"Tax": {}}, "Law": {"Crime": {}}}}'
    response = post_raw(api, "/api/topic-trees/", body)

    assert "duplicate key 'Law'" in refused(response)["detail"]
    assert TopicTree.objects.count() == 0


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        ({"Law": {"Tax": {}, " Tax ": {}}}, "two sibling topics are named 'Tax' under 'Law'"),
        ({"Law": ["Tax", "Tax"]}, "two sibling topics are named 'Tax' under 'Law'"),
        (["Law", "Law"], "two sibling topics are named 'Law' at the top level"),
    ],
)
def test_duplicate_sibling_topic_names_are_refused(api, tree, message):
    response = api.post("/api/topic-trees/", {"name": "Dup", "tree": tree}, format="json")

    assert refused(response)["detail"] == message
    assert TopicTree.objects.count() == 0


def test_duplicate_keys_in_an_imported_line_name_the_line(api):
    jsonl = '{"source": "a", "target": "b", "source": "c"}\n'
    response = api.post(IMPORT, {"name": "D", "protocol": "esa", "jsonl": jsonl}, format="json")

    reason = "not valid JSON (duplicate key 'source')"
    assert refused(response)["errors"] == [{"line": 1, "reason": reason}]


# --- Run configurations ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"budget_pulls": 10**30}, "budget_pulls"),
        ({"budget_money": 10**20}, "budget_money"),
        ({"algorithm": ["epsilon_greedy"]}, "algorithm"),
        ({"human_settings": {"fraction": "lots"}}, "human_settings"),
    ],
)
def test_search_run_configs_out_of_range_are_field_errors(api, world, enqueued, overrides, field):
    response = api.post("/api/search-runs/", synthetic_run_config(**overrides), format="json")

    assert field in refused(response)["errors"]
    assert SearchRun.objects.count() == 0
    enqueued.assert_not_called()


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"n_steps": 10**30}, "n_steps"),
        ({"seed": "²"}, "seed"),
        ({"budget_money": 10**20}, "budget_money"),
        ({"method": ["breaker_seeded"]}, "method"),
    ],
)
def test_breaker_run_configs_out_of_range_are_field_errors(api, overrides, field):
    response = api.post("/api/breaker-runs/", offline_config(**overrides), format="json")

    assert field in refused(response)["errors"]
    assert BreakerRun.objects.count() == 0


def test_a_comparison_naming_a_method_that_is_not_text_is_refused(api):
    config = offline_config() | {"methods": [{"name": "x"}, "breaker_seeded"]}
    config.pop("method")
    response = api.post("/api/breaker-runs/", config, format="json")

    assert "{'name': 'x'}" in refused(response)["errors"]
    assert BreakerRun.objects.count() == 0


def test_commands_refuse_huge_integers_by_field(world, tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(synthetic_run_config(budget_pulls=10**30)))
    with pytest.raises(CommandError, match="budget_pulls"):
        call_command("run_search", str(path))
    path.write_text(json.dumps(offline_config(n_steps=10**30)))
    with pytest.raises(CommandError, match="n_steps"):
        call_command("run_breaker", str(path))
    path.write_text('{"name": "x", "budget_pulls": ' + "9" * 5000 + "}")
    with pytest.raises(CommandError, match="a number longer than 4300 digits"):
        call_command("run_search", str(path))
    assert (SearchRun.objects.count(), BreakerRun.objects.count()) == (0, 0)


# --- Campaign settings and ids --------------------------------------------------------------


@pytest.mark.parametrize("setting", ["slug", "id", "created_at", "items"])
def test_campaign_settings_take_only_real_settings(api, setting):
    existing = esa_campaign(n_items=1)
    value = {"slug": existing.slug, "id": existing.pk, "created_at": "2020-01-01"}.get(setting, 1)
    body = {"name": "New", "protocol": "esa", "items": [ESA_LINE], "settings": {setting: value}}
    response = api.post(IMPORT, body, format="json")

    assert refused(response)["settings"][0].startswith(f"not campaign settings: {setting} (known:")
    assert list(Campaign.objects.values_list("name", flat=True)) == [existing.name]


@pytest.mark.parametrize(
    "url",
    [
        "/api/search-runs/abc/",
        "/api/search-runs/1.5/pause/",
        "/api/breaker-runs/null,null/",
        "/api/campaigns/x/progress/",
        "/api/no-such-thing/",
        "/api/campaigns/abc/",
    ],
)
@pytest.mark.parametrize("debug", [False, True])
def test_ids_that_are_not_numbers_are_a_json_404(api, settings, url, debug):
    settings.DEBUG = debug  # with DEBUG on, Django answers its HTML page, not handler404
    response = api.get(url)

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}


# --- Sizes ----------------------------------------------------------------------------------


def test_a_large_campaign_imports_as_a_file_upload(api):
    line = json.dumps(ESA_LINE | {"source": "x" * 1000}) + "\n"
    data = (line * 3000).encode()  # about 3 MB, over Django's 2.5 MB for form fields
    upload = SimpleUploadedFile("items.jsonl", data)
    response = api.post(
        IMPORT, {"name": "Big", "protocol": "esa", "file": upload}, format="multipart"
    )

    # Above IMPORT_INLINE_MAX_MB, so a worker imports it (docs/adr/0022); here its foreground twin.
    assert response.status_code == 202, response.content
    call_command("run_import", str(response.json()["id"]))
    assert Campaign.objects.get(name="Big").items.count() == 3000


def test_a_body_over_the_memory_limit_is_a_json_413(api):
    jsonl = (json.dumps(ESA_LINE) + "\n") * 200
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=4096):
        response = api.post(
            IMPORT, {"name": "Big", "protocol": "esa", "jsonl": jsonl}, format="multipart"
        )

    body = refused(response, 413)
    assert "multipart upload in the 'file' field" in body["detail"]
    assert Campaign.objects.count() == 0


TOO_LARGE = "The request is larger than 2.5 MB, the most one form or save may send."


@pytest.mark.parametrize("debug", [False, True])
def test_a_draft_or_submission_over_the_memory_limit_is_a_413_in_the_pages_shape(debug, settings):
    settings.DEBUG = debug  # the probe's server ran with DEBUG: Django's debug page then
    campaign = esa_campaign(n_items=1)
    annotator = enrolled(campaign, "alice")
    item = next_item_for(annotator, campaign)
    # The CSRF check on: it is where Django reads a form, before the view.
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(annotator.user)
    client.get(f"/annotation/items/{item_ref(item.pk)}/")
    headers = {"HTTP_X_CSRFTOKEN": client.cookies["csrftoken"].value, "HTTP_ACCEPT": JSON}
    comment = "x" * 3_000_000  # about 3 MB, over Django's 2.5 MB
    draft = json.dumps({"draft": {"score": 50, "spans": [], "comment": comment}})

    saved = client.post(f"/annotation/items/{item_ref(item.pk)}/draft/", draft, JSON, **headers)
    answer = {"answer": json.dumps({"score": 50, "spans": [], "comment": comment})}
    submitted = client.post(f"/annotation/items/{item_ref(item.pk)}/submit/", answer, **headers)
    plain = client.post(f"/annotation/items/{item_ref(item.pk)}/submit/", answer)

    for response in (saved, submitted):
        assert (response.status_code, response["Content-Type"]) == (413, JSON)
        assert response.json() == {"ok": False, "errors": [TOO_LARGE]}
    assert (plain.status_code, plain.content.decode()) == (413, TOO_LARGE)
    assert item.annotations.get().draft == {}
    assert item.annotations.get().status == "draft"


def test_an_htmx_request_over_the_memory_limit_gets_an_error_partial_the_page_shows(
    admin_client,
):
    """htmx swaps no error answer by default: a 413 in Django's or plain-text shape left the
    page unchanged. The partial names where it goes, the page's #request-error (base.html), and
    static/js/hardset.js swaps such an answer in."""
    big = {"text": "x" * 3_000_000}  # about 3 MB, over Django's 2.5 MB

    # The concept page merges with hx-post; the limit is checked before any view runs.
    response = admin_client.post("/lexical/concepts/1/merge/", big, HTTP_HX_REQUEST="true")

    assert (response.status_code, response["Content-Type"]) == (413, "text/html; charset=utf-8")
    assert response.content.decode() == (
        f'<p class="message message-error" role="alert">{TOO_LARGE}</p>'
    )
    assert (response["HX-Retarget"], response["HX-Reswap"]) == ("#request-error", "innerHTML")
    page = admin_client.get("/annotation/tasks/").content.decode()
    assert '<div id="request-error" aria-live="assertive"></div>' in page


def test_an_api_submission_over_the_memory_limit_is_a_json_413_naming_the_limit(api):
    campaign = esa_campaign(n_items=1)
    annotator = enrolled(campaign, "alice")
    item = next_item_for(annotator, campaign)
    api.force_authenticate(annotator.user)
    answer = {"score": 50, "spans": [], "comment": "x" * 3_000_000}

    body = {"item": item_ref(item.pk), "answer": answer}
    response = api.post("/api/annotations/", body, format="json")

    assert refused(response, 413)["detail"].startswith(
        "The request body is larger than 2.5 MB, the most the API reads into memory;"
    )
    assert item.annotations.get().status == "draft"


@override_settings(UPLOAD_MAX_BYTES=2**20)
def test_the_difficulty_dataset_upload_has_the_upload_size_limit(api, admin_client):
    line = {"langs": "en-cs", "src": "Hi", "tgt": {"a": "Ahoj"}, "scores": {"a": 90}}
    data = ((json.dumps(line) + "\n") * 15_000).encode()  # over 1 MB
    response = api.post(
        "/api/difficulty-datasets/import/",
        {"name": "Big", "file": SimpleUploadedFile("d.jsonl", data)},
        format="multipart",
    )
    page = admin_client.post(
        "/difficulty/upload/",
        {"name": "Big", "file": SimpleUploadedFile("d.jsonl", data), "perfect_score": "100"},
    )

    assert refused(response)["file"] == [
        "The file is larger than 1 MB; use the management command for big files."
    ]
    assert page.status_code == 200 and b"The file is larger than" in page.content
    assert DifficultyDataset.objects.count() == 0


# --- Every API error has a detail -----------------------------------------------------------


def test_field_errors_come_with_a_detail_line(api):
    response = api.get("/api/items/?campaign=abc")

    assert refused(response) == {
        "detail": "campaign: must be a campaign id",
        "campaign": "must be a campaign id",
    }


def test_run_config_errors_come_with_a_detail_line(api, world):
    response = api.post("/api/search-runs/", synthetic_run_config(name=""), format="json")

    assert refused(response) == {
        "detail": "name: a run needs a name",
        "errors": {"name": "a run needs a name"},
    }


def test_a_server_error_under_the_api_is_json(api, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("annotation.api.views.CampaignViewSet.list", broken)
    api.raise_request_exception = False
    response = api.get("/api/campaigns/")

    assert response.status_code == 500
    assert response.json() == {"detail": "Server error."}
