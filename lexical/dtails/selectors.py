"""What the DTAiLS page lists and the CSV downloads it offers (staff only, like all of lexical)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpResponse

from annotation.models import Campaign
from core.access import visible_or_404
from core.http import download
from lexical.access import may_use_lexical
from lexical.dtails import exports

EXAMPLE_FILES = {"expert_dataset.csv": "text/csv", "gl.words": "text/plain"}


def studies_for_user(user) -> QuerySet[Campaign]:
    """Choice campaigns with lexical-selection items (studies following the item contract)."""
    if not may_use_lexical(user):
        return Campaign.objects.none()
    return (
        Campaign.objects.filter(protocol="choice", items__origin=exports.STUDY_ORIGIN)
        .distinct()
        .order_by("-id")
    )


def study_for_user(user, pk: int) -> Campaign:
    return visible_or_404(studies_for_user(user), pk, "No such lexical-selection study.")


def study_csv_response(campaign: Campaign, *, extended: bool) -> HttpResponse:
    if extended:
        return download(exports.study_extended_csv(campaign), f"study-{campaign.pk}-extended.csv")
    return download(exports.study_released_csv(campaign), f"study-{campaign.pk}-dtails.csv")


def import_report(selection) -> list[str]:
    """What the import of ``selection`` let through, in words (command, page and API say it)."""
    repeated = selection.params.get("repeated_rows", 0)
    if not repeated:
        return []
    lines = selection.params.get("repeated_lines", [])
    where = ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines))
    if repeated > len(lines):
        where += ", ..."
    kept = (
        "kept as a second example" if selection.params.get("duplicates_kept") else "imported once"
    )
    plural = "s" if repeated != 1 else ""
    return [f"{repeated} row{plural} repeating an earlier row ({where}) {kept}"]
