"""Big annotation-campaign files (page and API) are imported as background jobs whose result
is the synchronous import's; a bad last line fails the job with its number."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.import_kinds import CAMPAIGN_KIND
from annotation.models import Campaign, Item
from annotation.services.campaigns import import_campaign
from imports.models import ImportJob
from tests.annotation.factories import esa_item
from tests.annotation.test_import import jsonl
from tests.imports.conftest import THRESHOLD

pytestmark = pytest.mark.django_db

N_ITEMS = 40
FORM = {
    "protocol": "esa", "overlap": 2, "status": "open", "signup_open": "on",
    "qualification_min_accuracy": 0.8, "qc_min_pass_rate": 0.8, "qc_min_checks": 1,
    "qc_min_seconds_per_item": 3, "qc_max_fast_fraction": 0.5, "claim_ttl_seconds": 1800,
    "weight_major": 6,
}  # fmt: skip
ITEM_FIELDS = (
    "position", "doc_id", "seg_id", "src_lang", "tgt_lang", "source", "target", "system",
    "kind", "expected", "meta",
)  # fmt: skip


def items_file(bad_last: bool = False) -> bytes:
    rows = [esa_item(n) for n in range(1, N_ITEMS + 1)]
    if bad_last:
        rows[-1] = {"doc_id": "d", "seg_id": N_ITEMS, "source": "no target"}
    content = jsonl(*rows).encode()
    assert len(content) > THRESHOLD
    return content


def items_of(campaign: Campaign) -> list[tuple]:
    return list(campaign.items.order_by("position").values_list(*ITEM_FIELDS))


def test_a_big_items_file_on_the_page_becomes_a_job_with_the_synchronous_result(
    admin_client, admin_user
):
    upload = SimpleUploadedFile("items.jsonl", items_file())
    response = admin_client.post(
        "/annotation/campaigns/new/", FORM | {"name": "Big", "items_file": upload}
    )
    job = ImportJob.objects.get()
    assert response["Location"] == f"/imports/{job.pk}/"
    assert (job.kind, job.status, job.lines_total) == (CAMPAIGN_KIND, "queued", N_ITEMS)
    assert not Campaign.objects.exists()

    call_command("run_import", str(job.pk))

    campaign = Campaign.objects.get(name="Big")
    job.refresh_from_db()
    assert (job.status, job.result_id) == ("done", campaign.pk)
    assert (campaign.overlap, campaign.mqm_weights, campaign.created_by) == (
        2, {"major": 6.0}, admin_user,
    )  # fmt: skip
    synchronous = import_campaign(items_file(), name="Sync", protocol="esa")
    assert items_of(campaign) == items_of(synchronous)
    page = admin_client.get(f"/imports/{job.pk}/")
    assert f'href="/annotation/campaigns/{campaign.pk}/"'.encode() in page.content


def test_the_api_answers_202_and_a_bad_last_line_fails_the_job_writing_nothing(admin_user):
    api = APIClient()
    api.force_authenticate(admin_user)
    upload = SimpleUploadedFile("items.jsonl", items_file(bad_last=True))
    response = api.post(
        "/api/campaigns/import/", {"name": "Broken", "protocol": "esa", "file": upload}
    )
    assert response.status_code == 202
    job_url = response["Location"]

    with pytest.raises(CommandError):
        call_command("run_import", str(response.json()["id"]))

    body = api.get(job_url).json()
    assert body["status"] == "failed"
    assert body["errors"] == [f"line {N_ITEMS}: target is required for esa and mqm items"]
    assert not Campaign.objects.exists() and not Item.objects.exists()


def test_a_taken_campaign_name_is_refused_before_any_job(admin_user):
    import_campaign(jsonl(esa_item(1)), name="Taken", protocol="esa")
    api = APIClient()
    api.force_authenticate(admin_user)
    upload = SimpleUploadedFile("items.jsonl", items_file())
    response = api.post(
        "/api/campaigns/import/", {"name": "Taken", "protocol": "esa", "file": upload}
    )
    assert response.status_code == 400
    assert response.json()["errors"] == ["a campaign named 'Taken' already exists"]
    assert not ImportJob.objects.exists()
