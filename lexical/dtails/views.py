"""The DTAiLS page: upload a dataset, download the example files, export selections and
finished lexical-selection studies (staff only)."""

from __future__ import annotations

from pathlib import Path

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from core.http import download
from lexical.concepts.selectors import selection_for_user, selections_for_user
from lexical.dtails import exports
from lexical.dtails.format import HEADER
from lexical.dtails.forms import DtailsImportForm
from lexical.dtails.selectors import (
    EXAMPLE_FILES,
    import_report,
    studies_for_user,
    study_csv_response,
    study_for_user,
)
from lexical.dtails.services import ImportRefused, import_dtails_upload

EXAMPLES = Path(__file__).resolve().parent / "examples"
SELECTIONS_SHOWN = 50
COLUMNS = [
    (HEADER[0], "The English source word (the concept)", "my"),
    (HEADER[1], "The English sentence", "My mother was an administrator."),
    (HEADER[2], "Its translation", "A miña nai era administradora."),
    (HEADER[3], "Python list of the variations; forms of one variation joined by /",
     "['meu/meus', 'miña/miñas']"),
    (HEADER[4], "The correct variation, one of the list", "miña/miñas"),
]  # fmt: skip


@staff_member_required
@require_http_methods(["GET", "POST"])
def dtails_home(request: HttpRequest) -> HttpResponse:
    form = DtailsImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            selection = import_dtails_upload(form.cleaned_data)
        except ImportRefused as exc:
            for field, problems in exc.errors.items():
                for problem in problems:
                    form.add_error(field if field in form.fields else None, problem)
        else:
            notes = "".join(f" {note}." for note in import_report(selection))
            messages.success(
                request,
                f"Imported {selection.params['rows']} examples into selection "
                f"{selection.name}.{notes}",
            )
            return redirect("lexical:selection_detail", pk=selection.pk)
    context = {
        "form": form,
        "columns": COLUMNS,
        "example_files": list(EXAMPLE_FILES),
        "selections": selections_for_user(request.user)[:SELECTIONS_SHOWN],
        "studies": studies_for_user(request.user),
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "lexical/dtails/home.html", context, status=status)


@staff_member_required
@require_GET
def example_file(request: HttpRequest, filename: str) -> HttpResponse:
    if filename not in EXAMPLE_FILES:
        raise Http404("No such example file.")
    response = HttpResponse(
        (EXAMPLES / filename).read_bytes(),
        content_type=f"{EXAMPLE_FILES[filename]}; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@staff_member_required
@require_GET
def selection_csv(request: HttpRequest, pk: int) -> HttpResponse:
    selection = selection_for_user(request.user, pk)
    return download(exports.selection_csv(selection), f"selection-{selection.pk}-dtails.csv")


@staff_member_required
@require_GET
def study_released_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """The items with sufficient context, in the released shape."""
    return study_csv_response(study_for_user(request.user, pk), extended=False)


@staff_member_required
@require_GET
def study_extended_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """Every item with its votes, majority and agreement."""
    return study_csv_response(study_for_user(request.user, pk), extended=True)
