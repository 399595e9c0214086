"""Pages of rule-validation studies (seed 004 §2.2–2.3). Staff only; thin: parse, call one
service or selector, render. Viewing the results also writes the rules' verdicts back
(idempotent), so a rule page shows what the annotators decided."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from core.http import download
from lexical.studies.rule_validation import selectors, services
from lexical.studies.rule_validation.export import results_csv
from lexical.studies.rule_validation.forms import RuleValidationStudyForm


@staff_member_required
@require_GET
def study_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(selectors.studies_for_user(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "lexical/rule_validation/study_list.html", {"page": page})


@staff_member_required
@require_http_methods(["GET", "POST"])
def study_create(request: HttpRequest) -> HttpResponse:
    template = "lexical/rule_validation/study_form.html"
    if request.method == "GET":
        initial = {}
        if request.GET.get("mining_job", "").isdigit():
            initial["mining_job"] = request.GET["mining_job"]
        return render(request, template, {"form": RuleValidationStudyForm(initial=initial)})
    form = RuleValidationStudyForm(request.POST)
    if form.is_valid():
        try:
            study = services.create_study(form.to_config(), created_by=request.user)
        except services.StudyConfigError as exc:
            form.add_config_errors(exc.errors)
        else:
            messages.success(
                request, f"Study created with {study.params['concepts']} concept item(s)."
            )
            return redirect("lexical:rule_validation", pk=study.pk)
    return render(request, template, {"form": form}, status=400)


@staff_member_required
@require_GET
def study_detail(request: HttpRequest, pk: int) -> HttpResponse:
    study = selectors.study_for_user(request.user, pk)
    changed = services.apply_rule_verdicts(study)
    context = {
        "study": study,
        "results": selectors.study_results(study),
        "verdicts_changed": changed,
    }
    return render(request, "lexical/rule_validation/study_detail.html", context)


@staff_member_required
@require_GET
def study_csv(request: HttpRequest, pk: int) -> HttpResponse:
    study = selectors.study_for_user(request.user, pk)
    return download(
        results_csv(selectors.study_results(study)), f"rule-validation-{study.pk}-results.csv"
    )
