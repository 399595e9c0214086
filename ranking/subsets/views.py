"""Pages of discrimination analyses, under ``/ranking/discrimination/``: the list, the new-analysis
form, an analysis's page (curves, table, downloads) and the section a version's row loads.
Thin: parse, call one service or selector,
render."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from challenge_sets.access import may_curate
from core.access import visible_or_404
from core.http import HtmxHttpRequest
from core.job_pages import cancel_view
from ranking import downloads
from ranking.services import RankingStateError
from ranking.subsets import charts, selectors
from ranking.subsets.forms import AnalysisForm
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import cancel_analysis, start_analysis
from ranking.views import not_done_page, result_chart, result_page, start_from_form

Kind = DiscriminationAnalysis.SubjectKind
DETAIL = "ranking/discrimination_detail.html"
NEW = "ranking/discrimination_new.html"


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


@staff_member_required
@require_http_methods(["GET", "POST"])
def analysis_new(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = AnalysisForm(request.POST, user=request.user)
        return start_from_form(
            request, form, start_analysis, NEW, page="ranking:discrimination_detail"
        )
    # The GET parameters name the subject (a link from its page): a preset, not a submission.
    initial: dict[str, Any] = request.GET.dict()
    initial["subject_kind"] = _preset_kind(initial)
    return render(request, NEW, {"form": AnalysisForm(initial=initial, user=request.user)})


@staff_member_required
@require_GET
def analysis_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    analysis = selectors.analysis_for_user(request.user, pk)
    return result_page(request, DETAIL, analysis, name="analysis", page_of=selectors.analysis_page)


@staff_member_required
@require_GET
def analysis_chart(request: HttpRequest, pk: int) -> HttpResponse:
    analysis = selectors.analysis_for_user(request.user, pk)
    return result_chart(analysis, charts.curves_svg)


@staff_member_required
@require_GET
def analysis_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    analysis = selectors.analysis_for_user(request.user, pk)
    return not_done_page(analysis) or downloads.result_file(analysis, fmt)


analysis_cancel = cancel_view(
    selectors.analysis_for_user, cancel_analysis, RankingStateError,
    done="Analysis cancelled.", page="ranking:discrimination_detail",
)  # fmt: skip


# --- the version section a challenge set's page loads (ranking/subsets/sections.py) ----------


@staff_member_required
@require_GET
def version_section(request: HttpRequest, pk: int) -> HttpResponse:
    if not may_curate(request.user):
        raise Http404("No such version.")
    version = visible_or_404(selectors.versions_for(request.user), pk, "No such version.")
    context = selectors.version_summary(request.user, version)
    return render(request, "ranking/discrimination_section_version.html", context)
