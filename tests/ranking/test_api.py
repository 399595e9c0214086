"""REST API of rankings: a round trip (create, run, read, export), hostile bodies answered with a
400 that names the field and writes nothing, and who may use it."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from ranking import services
from ranking.models import SystemRanking
from tests.ranking.support import tiered_dataset

pytestmark = pytest.mark.django_db

RANKINGS = "/api/rankings/"


@pytest.fixture
def api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def test_create_run_read_and_export(api, django_capture_on_commit_callbacks, sent_tasks):
    dataset = tiered_dataset()
    body = {"input_kind": "dataset", "dataset": dataset.pk, "test": "permutation",
            "n_resamples": 2000, "seed": 5, "holm": True}  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post(RANKINGS, body, format="json")
    assert created.status_code == 201, created.json()
    data = created.json()
    assert (data["status"], data["test"], data["n_resamples"], data["holm"]) == (
        "queued", "permutation", 2000, True
    )  # fmt: skip
    assert sent_tasks == [
        ("ranking.advance_ranking", (data["id"], 0), {"queue": "default", "countdown": None})
    ]
    services.run_in_foreground(data["id"])
    detail = api.get(f"{RANKINGS}{data['id']}/").json()
    assert detail["status"] == "done" and detail["result"]["ranking"]["clusters"] == [
        1, 1, 2, 2, 3, 3
    ]  # fmt: skip
    assert detail["links"]["latex"].endswith(f"/api/rankings/{data['id']}/export/?as=latex")
    listed = api.get(RANKINGS).json()
    assert [r["id"] for r in listed["results"]] == [data["id"]]
    assert "result" not in listed["results"][0]
    latex = api.get(f"{RANKINGS}{data['id']}/export/", {"as": "latex"}, HTTP_ACCEPT="text/csv")
    assert latex.status_code == 200 and latex.content.decode().count("\\midrule") == 3
    assert latex["Content-Disposition"] == f'attachment; filename="ranking-{data["id"]}.tex"'


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"n_resamples": "many"}, "n_resamples", "A valid integer is required."),
        ({"n_resamples": 10**30}, "n_resamples", "Ensure this value is less than or equal to"),
        ({"alpha": 2}, "alpha", "Ensure this value is less than or equal to 0.5."),
        ({"test": "t-test"}, "test", '"t-test" is not a valid choice.'),
        ({"dataset": 999999}, "dataset", 'Invalid pk "999999" - object does not exist.'),
        ({"dataset": None}, "dataset", "choose the dataset to rank"),
        ({"language_pair": "zz-yy"}, "language_pair", "tiers has no language pair 'zz-yy'"),
        ({"tset": "wilcoxon"}, "tset", "unknown field"),
        ({"name": "x" * 201}, "name", "Ensure this field has no more than 200 characters."),
    ],
)
def test_bad_bodies_are_a_400_naming_the_field_and_nothing_is_written(api, body, field, message):
    dataset = tiered_dataset()
    response = api.post(RANKINGS, {"input_kind": "dataset", "dataset": dataset.pk} | body,
                        format="json")  # fmt: skip
    assert response.status_code == 400
    data = response.json()
    # A serializer's errors come keyed by field beside "detail"; the service's under "errors".
    errors = data.get("errors") or {k: v for k, v in data.items() if k != "detail"}
    assert list(errors) == [field]
    found = errors[field] if isinstance(errors[field], str) else errors[field][0]
    assert found.startswith(message) and field in data["detail"]
    assert not SystemRanking.objects.exists()


@pytest.mark.parametrize(
    "raw",
    [b'{"input_kind": "dataset", "alpha": NaN}', b'{"input_kind": "dataset", "input_kind": "x"}',
     b"[" * 5000 + b"]" * 5000, b'{"name": "\\ud800"}', b'{"name": "a\\u0000b"}'],
)  # fmt: skip
def test_hostile_json_is_a_400(api, raw):
    response = api.post(RANKINGS, raw, content_type="application/json")
    assert response.status_code == 400 and response.json()["detail"].startswith("JSON parse error")
    assert not SystemRanking.objects.exists()


def test_export_asks_for_a_known_format_and_a_finished_ranking(api):
    ranking = services.start_ranking(input_kind="dataset", dataset=tiered_dataset(), enqueue=False)
    bad = api.get(f"{RANKINGS}{ranking.pk}/export/", {"as": "xlsx"})
    assert bad.status_code == 400 and bad.json()["errors"] == {
        "as": "as: must be one of csv, latex, typst, json"
    }
    early = api.get(f"{RANKINGS}{ranking.pk}/export/", {"as": "csv"})
    assert early.status_code == 409 and "queued" in early.json()["detail"]
    assert api.post(f"{RANKINGS}{ranking.pk}/cancel/").json()["status"] == "cancelled"
    assert api.post(f"{RANKINGS}{ranking.pk}/cancel/").status_code == 409


@pytest.mark.parametrize("persona", ["anonymous", "annotator_user"])
def test_only_staff_may_use_it(request, persona):
    ranking = services.start_ranking(input_kind="dataset", dataset=tiered_dataset(), enqueue=False)
    client = APIClient()
    if persona != "anonymous":
        client.force_authenticate(request.getfixturevalue(persona))
    for path in (RANKINGS, f"{RANKINGS}{ranking.pk}/", f"{RANKINGS}{ranking.pk}/export/?as=csv"):
        assert client.get(path).status_code == 403, path
    assert client.post(RANKINGS, {"input_kind": "dataset"}, format="json").status_code == 403
