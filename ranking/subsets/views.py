"""Pages of discrimination analyses, under ``/ranking/discrimination/``: the list, the new-analysis
form, an analysis's page (curves, table, downloads) and the section a version's row loads.
Thin: parse, call one service or selector,
render."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from challenge_sets.access import may_curate
from core.http import HtmxHttpRequest, download
from ranking.subsets import charts, exports, selectors
from ranking.subsets.forms import AnalysisForm
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import (
    AnalysisError,
    AnalysisStateError,
    cancel_analysis,
    start_analysis,
)

Kind = DiscriminationAnalysis.SubjectKind
DOWNLOADS = {"csv": ("text/csv; charset=utf-8", "csv"), "json": ("application/json", "json")}


@staff_member_required
@require_GET
def analysis_list(request: HttpRequest) -> HttpResponse:
    analyses = selectors.analyses_for_user(request.user).defer("scores", "state")[:200]
    return render(request, "ranking/discrimination_list.html", {"analyses": analyses})


def _preset_kind(query: dict[str, str]) -> str:
    """The kind the linking page meant: named, or told by the subject it passed."""
    if query.get("subject_kind") in Kind.values:
        return query["subject_kind"]
    for field, kind in (("version", Kind.VERSION), ("evaluation", Kind.HARDEST),
                        ("dataset", Kind.HARDEST), ("comparison", Kind.BREAKER)):  # fmt: skip
        if query.get(field):
            return kind
    return ""


def _new_page(request: HttpRequest, form: AnalysisForm, status: int = 200) -> HttpResponse:
    return render(request, "ranking/discrimination_new.html", {"form": form}, status=status)


@staff_member_required
@require_http_methods(["GET", "POST"])
def analysis_new(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        # The GET parameters name the subject (a link from its page): a preset, not a submission.
        initial: dict[str, Any] = request.GET.dict()
        initial["subject_kind"] = _preset_kind(initial)
        return _new_page(request, AnalysisForm(initial=initial, user=request.user))
    form = AnalysisForm(request.POST, user=request.user)
    if not form.is_valid():
        return _new_page(request, form, status=400)
    try:
        analysis = start_analysis(**form.service_arguments(), created_by=request.user)
    except AnalysisError as exc:
        for field, message in exc.errors.items():
            form.add_error(field if field in form.fields else None, message)
        return _new_page(request, form, status=400)
    messages.success(request, f"Analysis {analysis.name!r} queued.")
    return redirect("ranking:discrimination_detail", pk=analysis.pk)


@staff_member_required
@require_GET
def analysis_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    analysis = selectors.analysis_for_user(request.user, pk)
    context: dict[str, Any] = {"analysis": analysis}
    if analysis.status == DiscriminationAnalysis.Status.DONE:
        context["page"] = selectors.analysis_page(analysis)
    if request.htmx:
        html = render_to_string(
            "ranking/discrimination_detail.html#status", context, request=request
        )
        # A finished analysis answers 286 so htmx stops polling.
        return HttpResponseStopPolling(html) if analysis.is_finished else HttpResponse(html)
    return render(request, "ranking/discrimination_detail.html", context)


def _finished(request: HttpRequest, pk: int) -> DiscriminationAnalysis | HttpResponse:
    analysis = selectors.analysis_for_user(request.user, pk)
    if analysis.status != DiscriminationAnalysis.Status.DONE:
        return HttpResponse(
            f"The analysis is {analysis.status}; this exists once it is done.",
            status=409,
            content_type="text/plain; charset=utf-8",
        )
    return analysis


@staff_member_required
@require_GET
def analysis_chart(request: HttpRequest, pk: int) -> HttpResponse:
    analysis = _finished(request, pk)
    if isinstance(analysis, HttpResponse):
        return analysis
    return HttpResponse(charts.curves_svg(analysis.result), content_type="image/svg+xml")


@staff_member_required
@require_GET
def analysis_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    analysis = _finished(request, pk)
    if isinstance(analysis, HttpResponse):
        return analysis
    content_type, extension = DOWNLOADS[fmt]
    render_as = exports.csv_download if fmt == "csv" else exports.json_download
    return download(render_as(analysis.result), f"discrimination-{pk}.{extension}", content_type)


@staff_member_required
@require_POST
def analysis_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    analysis = selectors.analysis_for_user(request.user, pk)
    try:
        cancel_analysis(analysis)
    except AnalysisStateError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Analysis cancelled.")
    return redirect("ranking:discrimination_detail", pk=analysis.pk)


# --- the version section a challenge set's page loads (ranking/subsets/sections.py) ----------


@staff_member_required
@require_GET
def version_section(request: HttpRequest, pk: int) -> HttpResponse:
    if not may_curate(request.user):
        raise Http404("No such version.")
    version = selectors.versions_for(request.user).filter(pk=pk).first()
    if version is None:
        raise Http404("No such version.")
    context = selectors.version_summary(request.user, version)
    return render(request, "ranking/discrimination_section_version.html", context)
