"""Annotation campaigns as a kind of background import (ADR 0022): a big items file from the
page or the API is imported by a worker with the same service as a small one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.urls import reverse

import imports
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import check_new_campaign, import_campaign

CAMPAIGN_KIND = "annotation-campaign"


def campaign_options(
    *,
    name: str,
    protocol: str,
    file_format: str,
    settings: Mapping[str, Any],
    offset_unit: str = "codepoint",
    file_name: str = "",
) -> dict[str, Any]:
    """What the form or API call said, as the job stores it (JSON)."""
    return {"name": name, "protocol": protocol, "format": file_format,
            "settings": dict(settings), "offset_unit": offset_unit,
            "file_name": file_name}  # fmt: skip


def refusals(exc: Exception) -> list[str]:
    """An import's refusal as 'line N: reason' strings (or Django's messages)."""
    if isinstance(exc, CampaignImportError):
        return [f"{exc.unit} {number}: {reason}" for number, reason in exc.errors]
    if isinstance(exc, ValidationError):
        return exc.messages
    return [str(exc)]


def _check(options: Mapping[str, Any]) -> None:
    try:
        check_new_campaign(options["name"], options["protocol"])
    except ValidationError as exc:
        raise imports.ImportRefused(refusals(exc)) from None


def _run(lines: Iterable[bytes], options: Mapping[str, Any], created_by, on_written):
    try:
        return import_campaign(
            lines,
            name=options["name"],
            protocol=options["protocol"],
            file_format=options["format"],
            offset_unit=options.get("offset_unit", "codepoint"),
            file_name=options.get("file_name", ""),
            created_by=created_by,
            on_written=lambda campaign: on_written(
                campaign, f"{campaign.items.count()} items in {campaign.name}"
            ),
            **options["settings"],
        )
    except (ValidationError, ValueError, TypeError) as exc:
        raise imports.ImportRefused(refusals(exc)) from None


def register() -> None:
    imports.register(
        imports.ImportKind(
            name=CAMPAIGN_KIND,
            label="Annotation campaign",
            run=_run,
            result_url=lambda pk: reverse("annotation:campaign_detail", args=[pk]),
            check=_check,
        )
    )
