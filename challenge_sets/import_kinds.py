"""A challenge set's JSONL source as a kind of background import (ADR 0022): a big file from
the page or the API is added by a worker with the same service as a small one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.urls import reverse

import imports
from challenge_sets import services
from challenge_sets.models import ChallengeSet
from challenge_sets.sources.base import SourceError
from challenge_sets.sources.jsonl import ORIGIN, read_candidates
from imports import services as import_services

JSONL_KIND = "challenge-set-jsonl"


def in_background(source_name: str, upload) -> bool:
    """Whether items from ``source_name`` go to a worker: a JSONL file above the threshold."""
    return (
        source_name == ORIGIN and upload is not None and import_services.runs_in_background(upload)
    )


def jsonl_options(challenge_set: ChallengeSet, file_name: str) -> dict[str, Any]:
    return {"set_id": challenge_set.pk, "file": file_name}


def _the_set(options: Mapping[str, Any]) -> ChallengeSet:
    challenge_set = ChallengeSet.objects.filter(pk=options["set_id"]).first()
    if challenge_set is None:
        raise imports.ImportRefused(["the challenge set was deleted"])
    return challenge_set


def _check(options: Mapping[str, Any]) -> None:
    _the_set(options)


def _run(lines: Iterable[bytes], options: Mapping[str, Any], created_by, on_written):
    challenge_set = _the_set(options)

    def written(result: services.AddResult) -> None:
        on_written(
            challenge_set,
            f"{result.added} items added ({result.skipped} already in the set, "
            f"{result.near_duplicates} near-duplicates flagged)",
        )

    try:
        candidates = read_candidates(b"".join(lines), options["file"])
        services.add_items(challenge_set, candidates, user=created_by, on_written=written)
    except SourceError as exc:
        raise imports.ImportRefused(exc.errors) from None
    return challenge_set


def register() -> None:
    imports.register(
        imports.ImportKind(
            JSONL_KIND,
            "Challenge-set items (JSONL)",
            _run,
            lambda pk: reverse("challenge_sets:set_detail", args=[pk]),
            check=_check,
        )
    )
