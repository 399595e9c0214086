"""Pages of lexical-selection studies (seed 004 §2.3): the list with Table 2 over studies, the
creation form and the results page. Staff only; thin: parse, call one service or selector,
render."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from lexical.concepts.selectors import selections_for_user
from lexical.studies.selection_study import selectors
from lexical.studies.selection_study.forms import SelectionStudyForm
from lexical.studies.selection_study.services import SelectionStudyError, create_selection_study


@staff_member_required
@require_GET
def study_list(request: HttpRequest) -> HttpResponse:
    studies = list(selectors.studies_for_user(request.user)[:100])
    rows = [(study, selectors.study_results(study).table2) for study in studies]
    return render(request, "lexical/selection_study/list.html", {"rows": rows})


@staff_member_required
@require_http_methods(["GET", "POST"])
def study_create(request: HttpRequest) -> HttpResponse:
    form = SelectionStudyForm(
        request.POST or None, initial={"selection": request.GET.get("selection")}
    )
    form.fields["selection"].queryset = selections_for_user(request.user)  # type: ignore[attr-defined]
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            study = create_selection_study(
                form.cleaned_data["selection"], form.params(), created_by=request.user
            )
        except SelectionStudyError as exc:
            if exc.field in form.fields:
                form.add_error(exc.field, str(exc))
            else:
                error = str(exc)
        else:
            skipped = len(study.params.get("skipped_concepts", []))
            note = (
                f"; {skipped} concept(s) with fewer than two variations skipped" if skipped else ""
            )
            messages.success(
                request, f"Created the study with {study.params['items']} items{note}."
            )
            return redirect("lexical:selection_study_detail", pk=study.pk)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "error": error}
    return render(request, "lexical/selection_study/form.html", context, status=status)


@staff_member_required
@require_GET
def study_detail(request: HttpRequest, pk: int) -> HttpResponse:
    study = selectors.study_for_user(request.user, pk)
    context = {"study": study, "results": selectors.study_results(study)}
    return render(request, "lexical/selection_study/detail.html", context)
