"""Pages of model evaluations (seed 004 §4). Staff only; thin: parse, call one service or
selector, render. The evaluation page polls its status every 2 s and reloads the results when
the evaluation moved."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.http import HtmxHttpRequest
from core.job_pages import (
    JobFormView,
    cancel_view,
    job_list,
    job_page,
    job_version,
    started,
)
from lexical.evaluation import selectors
from lexical.evaluation.forms import EvaluationForm
from lexical.evaluation.services import (
    EvaluationStateError,
    cancel_evaluation,
    start_lexical_evaluation,
)

DETAIL = "lexical/evaluation/detail.html"
SVG = "image/svg+xml"


@staff_member_required
@require_GET
def evaluation_list(request: HttpRequest) -> HttpResponse:
    rows = selectors.evaluations_for_user(request.user)
    has_finished = rows.filter(status="finished").exists()
    return job_list(request, "lexical/evaluation/list.html", rows, has_finished=has_finished)


@staff_member_required
@require_GET
def overview_chart(request: HttpRequest) -> HttpResponse:
    """Fig. 2 over languages: the latest finished evaluation of each selection."""
    return HttpResponse(
        selectors.chart_svg(selectors.latest_finished(request.user)), content_type=SVG
    )


class EvaluationCreate(JobFormView):
    template_name = "lexical/evaluation/form.html"

    def get_form(self, data: Any = None, files: Any = None) -> EvaluationForm:
        if data is not None:
            return EvaluationForm(data)
        return EvaluationForm(initial={"selection": self.request.GET.get("selection")})

    def start(self, form: EvaluationForm) -> HttpResponse:
        evaluation = start_lexical_evaluation(form.to_config(), created_by=self.request.user)
        message = f"Evaluation #{evaluation.pk} is queued."
        return started(self.request, message, "lexical:evaluation:detail", evaluation)


def _context(evaluation) -> dict:
    return {
        "evaluation": evaluation,
        "version": job_version(evaluation),
        "results": selectors.results(evaluation),
        "human": selectors.human_reference(evaluation),
    }


@staff_member_required
@require_GET
def evaluation_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    evaluation = selectors.evaluation_for_user(request.user, pk)
    return job_page(
        request, DETAIL, evaluation, _context, name="evaluation", changed_event="evaluation-changed"
    )


@staff_member_required
@require_GET
def evaluation_results(request: HttpRequest, pk: int) -> HttpResponse:
    context = _context(selectors.evaluation_for_user(request.user, pk))
    return render(request, f"{DETAIL}#results", context)


@staff_member_required
@require_GET
def evaluation_chart(request: HttpRequest, pk: int) -> HttpResponse:
    evaluation = selectors.evaluation_for_user(request.user, pk)
    return HttpResponse(selectors.chart_svg([evaluation]), content_type=SVG)


@staff_member_required
@require_GET
def bias_chart(request: HttpRequest, pk: int, size: int) -> HttpResponse:
    """App. Fig. 5 (two variations) or Fig. 6 (three)."""
    evaluation = selectors.evaluation_for_user(request.user, pk)
    if size not in (2, 3):
        raise Http404("Position bias is drawn for 2 and 3 options.")
    return HttpResponse(selectors.bias_svg(evaluation, size), content_type=SVG)


evaluation_cancel = cancel_view(
    selectors.evaluation_for_user, cancel_evaluation, EvaluationStateError,
    done="Evaluation cancelled.", page="lexical:evaluation:detail",
)  # fmt: skip


@staff_member_required
@require_GET
def answers_csv(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    return selectors.answers_csv_response(selectors.evaluation_for_user(request.user, pk))


@staff_member_required
@require_GET
def summary_csv(request: HttpRequest, pk: int) -> HttpResponse:
    return selectors.summary_csv_response(selectors.evaluation_for_user(request.user, pk))
