"""The protocol registry: a new protocol is one class, one template and one ``register`` call.

A toy yes/no "acceptability" protocol is registered for the test (and unregistered after it),
with its template served from memory, and driven through import (command and API), the
annotate page (plain HTTP form posts) and the exports.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation import exports, protocols, selectors
from annotation.models import Annotation, Campaign
from annotation.protocols.base import AnswerContext, Cleaned, Protocol
from annotation.services.campaigns import import_campaign
from tests.annotation.factories import enrolled

pytestmark = pytest.mark.django_db

TOY_TEMPLATE = """
{% partialdef shortcuts %}<ul class="keys"><li><kbd>y</kbd> acceptable</li></ul>{% endpartialdef %}
{% partialdef target %}<div class="pair-col">{{ item.target }}</div>{% endpartialdef %}
{% partialdef answer %}
<fieldset class="acceptability"><legend>{{ toy_question }}</legend>
<label><input type="radio" name="acceptable" value="yes"> Yes</label>
<label><input type="radio" name="acceptable" value="no"> No</label></fieldset>
{% endpartialdef %}
"""


class Acceptability(Protocol):
    """Is the text acceptable? Yes scores 100, no scores 0."""

    name = "acceptability"
    label = "Acceptability (yes / no)"
    extra_csv_columns = ("acceptable",)

    def clean_answer(self, answer: Any, context: AnswerContext) -> Cleaned:
        value = answer.get("acceptable")
        if value is None:
            return {"acceptable": None}, [], ["say whether the text is acceptable"]
        if not isinstance(value, bool):
            return {}, ["acceptable must be true or false"], []
        return {"acceptable": value}, [], []

    def answer_from_post(self, post: Any) -> dict[str, Any]:
        return {"acceptable": {"yes": True, "no": False}.get(post.get("acceptable", ""))}

    def submission_scores(self, campaign, answer):
        return (100.0 if answer["acceptable"] else 0.0), None

    def annotation_columns(self, campaign, item, annotation):
        return {"acceptable": annotation.answer["acceptable"], "score": annotation.score}

    def aggregate_columns(self, campaign, item, annotations):
        votes = [a.answer["acceptable"] for a in annotations]
        return {"share_acceptable": sum(votes) / len(votes) if votes else None}

    def page_context(self, campaign, item, annotation):
        return {"toy_question": "Is this text acceptable?"}


@pytest.fixture
def acceptability(settings):
    """The toy protocol, registered with its template for one test only."""
    templates = copy.deepcopy(django_settings.TEMPLATES)
    partials_loader, wrapped = templates[0]["OPTIONS"]["loaders"][0]
    memory = ("django.template.loaders.locmem.Loader", {TOY_TEMPLATE_NAME: TOY_TEMPLATE})
    templates[0]["OPTIONS"]["loaders"] = [(partials_loader, [memory, *wrapped])]
    settings.TEMPLATES = templates
    protocol = protocols.register(Acceptability())
    yield protocol
    protocols.unregister(protocol.name)


TOY_TEMPLATE_NAME = "annotation/protocols/acceptability.html"


def jsonl(*rows: dict) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_registry_lists_the_built_ins_and_refuses_unknown_names():
    assert protocols.names() == ["esa", "mqm", "choice", "esa_mqm", "translation", "questionnaire"]
    assert protocols.choices()[0] == ("esa", "ESA (error spans + 0–100 score)")
    assert protocols.get("mqm").name == "mqm"
    with pytest.raises(protocols.UnknownProtocol, match="unknown protocol 'nope'; registered"):
        protocols.get("nope")
    with pytest.raises(ValueError, match="already registered"):
        protocols.register(protocols.get("esa"))
    with pytest.raises(ValueError, match="lowercase"):
        protocols.register(type("Bad", (Acceptability,), {"name": "Bad Name"})())


def test_campaign_protocol_must_be_registered():
    campaign = Campaign(name="Nope", protocol="acceptability")
    with pytest.raises(ValidationError, match="unknown protocol 'acceptability'"):
        campaign.full_clean(exclude=["slug", "created_by"])
    with pytest.raises(ValidationError):
        import_campaign(jsonl({"source": "x"}), name="Nope", protocol="acceptability")
    assert not Campaign.objects.exists()


def test_a_registered_protocol_goes_through_import_annotate_and_export(
    acceptability, tmp_path, client, admin_user
):
    path = tmp_path / "items.jsonl"
    path.write_text(
        jsonl(
            {
                "source": "Colourless green ideas sleep furiously.",
                "system": "s1",
                "origin": "toy",
                "origin_ref": "t:1",
            },
            {
                "source": "The cat sat on the mat.",
                "target": "optional",
                "system": "s2",
                "origin": "toy",
                "origin_ref": "t:2",
            },
        ),
        encoding="utf-8",
    )
    call_command(
        "import_campaign", str(path), "--name", "Toy", "--protocol", "acceptability",
        "--overlap", "2", stdout=io.StringIO(),
    )  # fmt: skip
    campaign = Campaign.objects.get(name="Toy")
    assert (campaign.protocol, campaign.items.count()) == ("acceptability", 2)
    assert campaign.protocol_label == "Acceptability (yes / no)"

    api = APIClient()
    api.force_authenticate(admin_user)
    response = api.post(
        "/api/campaigns/import/",
        {"name": "Toy API", "protocol": "acceptability", "items": [{"source": "Hi"}]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert Campaign.objects.get(name="Toy API").protocol == "acceptability"

    # Answers here take no time: without this, QC's time rule leaves both annotators out.
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_seconds_per_item=0)
    for name, votes in (("alice", ["yes", "yes"]), ("bob", ["no", "yes"])):
        annotator = enrolled(campaign, name)
        client.force_login(annotator.user)
        for vote in votes:
            item_url = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
            page = client.get(item_url)
            assert page.status_code == 200
            html = page.content.decode()
            assert "Is this text acceptable?" in html and 'name="acceptable"' in html
            incomplete = client.post(f"{item_url}submit/", {"idempotency_key": f"{name}-x"})
            assert incomplete.status_code == 422
            assert "say whether the text is acceptable" in incomplete.content.decode()
            done = client.post(
                f"{item_url}submit/", {"acceptable": vote, "idempotency_key": f"{name}{item_url}"}
            )
            assert done.status_code == 303
        client.logout()
    assert list(Annotation.objects.order_by("id").values_list("answer", "score")) == [
        ({"acceptable": True}, 100.0),
        ({"acceptable": True}, 100.0),
        ({"acceptable": False}, 0.0),
        ({"acceptable": True}, 100.0),
    ]

    rows = [json.loads(line) for line in exports.stream_export(campaign, "jsonl")]
    assert [(r["annotator"], r["acceptable"], r["score"]) for r in rows] == [
        (rows[0]["annotator"], True, 100.0),
        (rows[1]["annotator"], True, 100.0),
        (rows[2]["annotator"], False, 0.0),
        (rows[3]["annotator"], True, 100.0),
    ]
    table = list(csv.DictReader(io.StringIO("".join(exports.stream_export(campaign, "csv")))))
    assert [(r["protocol"], r["acceptable"], r["score"]) for r in table] == [
        ("acceptability", "true", "100.0"),
        ("acceptability", "true", "100.0"),
        ("acceptability", "false", "0.0"),
        ("acceptability", "true", "100.0"),
    ]
    items = [json.loads(line) for line in exports.stream_export(campaign, "jsonl", aggregate=True)]
    assert [(r["system"], r["n_annotations"], r["mean_score"], r["share_acceptable"])
            for r in items] == [("s1", 2, 50.0, 0.5), ("s2", 2, 100.0, 1.0)]  # fmt: skip

    results = list(selectors.item_results(campaign, origin="toy"))
    assert [(r.origin_ref, r.n_submitted, r.mean_score, r.complete) for r in results] == [
        ("t:1", 2, 50.0, True),
        ("t:2", 2, 100.0, True),
    ]
