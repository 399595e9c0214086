"""Pages of bandit search runs (seed 000). Staff only; thin: parse, call one service, render.

The run page is live: a status section polls every 2 s (and stops once the run is over); when
the run moved since the last poll, the poll answers with an ``HX-Trigger: run-changed`` header
and the results section (top-k, chart, costs) reloads itself. Expanded topic texts load lazily.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.refusals import CampaignImportError
from core.http import HtmxHttpRequest
from core.job_pages import JOBS_PER_PAGE, JobFormView, job_version, polled_status, started
from engines.models import Engine
from search.models import Pull, SearchRun
from search.runs import charts as run_charts
from search.runs import human_loop
from search.runs.forms import RunForm
from search.runs.records import pull_view, pulls_jsonl_response, top_k_json_response
from search.runs.selectors import (
    LARGE_FIELDS,
    cost_per_engine,
    human_counts,
    pulls_of_arm,
    run_for_user,
    run_rows,
    top_topics,
)
from search.runs.services import RunStateError, cancel_run, pause_run, resume_run, start_search_run

DETAIL_TEMPLATE = "search/runs/run_detail.html"
TEXTS_TEMPLATE = "search/runs/topic_texts.html"
TEXTS_PER_TOPIC = 20
# One click sends at most this many texts: a top-k of a long run can hold thousands of pulls,
# and each becomes one annotation item per translator.
MAX_SEND = 500
CONTROLS = {"pause": pause_run, "resume": resume_run, "cancel": cancel_run}
CONTROL_DONE = {"pause": "paused", "resume": "resumed", "cancel": "cancelled"}


# --- List and new-run form -----------------------------------------------------------------


@staff_member_required
@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(run_rows(request.user), JOBS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [(run, run.resolved_algorithm) for run in page]
    return render(request, "search/runs/run_list.html", {"page": page, "rows": rows})


def _duplicated_run(request: HttpRequest) -> SearchRun | None:
    """The run named by ``?from=`` ("duplicate as new run"), if any."""
    source = request.GET.get("from", "")
    return run_for_user(request.user, int(source)) if source.isdigit() else None


class RunCreate(JobFormView):
    template_name = "search/runs/run_form.html"
    source: SearchRun | None = None

    def get_form(self, data: Any = None, files: Any = None) -> RunForm:
        if data is not None:
            return RunForm(data)
        self.source = _duplicated_run(self.request)
        return RunForm(initial=RunForm.initial_from(self.source) if self.source else {})

    def context(self, form: RunForm) -> dict:
        return {"form": form, "source": self.source}

    def start(self, form: RunForm) -> HttpResponse:
        run = start_search_run(form.to_config(), created_by=self.request.user)
        return started(self.request, f"Run #{run.pk} created.", "search:run_detail", run)


# --- Run page: status (polled) and results (reloaded when the run moves) -----------------------


def _status_context(run: SearchRun, action_error: str = "") -> dict:
    shows_humans = run.human_mode != SearchRun.HumanMode.OFF or run.campaign_id
    return {
        "run": run,
        "version": job_version(run),
        "human": human_counts(run) if shows_humans else None,
        "action_error": action_error,
    }


def _results_context(run: SearchRun) -> dict:
    return {
        "run": run,
        "version": job_version(run),
        "rows": top_topics(run),
        "synthetic": run.sampler == SearchRun.Sampler.SYNTHETIC,
        "cost": cost_per_engine(run),
        "calibration": run.calibration if run.human_mode == SearchRun.HumanMode.CALIBRATE else None,
    }


def _status_response(request: HttpRequest, run: SearchRun, action_error: str = "") -> HttpResponse:
    # Every write to the run (a round's claim and commit, a control, human scores settling)
    # moves its version: the results below the status reload on "run-changed".
    context = _status_context(run, action_error)
    return polled_status(request, DETAIL_TEMPLATE, context, run, changed_event="run-changed")


def _send_context(run: SearchRun) -> dict:
    # Only an artificial crowd translates; every other estimator leaves nothing to judge.
    return {
        "has_translations": run.difficulty_engine.kind == Engine.Kind.ARTIFICIAL_CROWD,
        "max_send": MAX_SEND,
    }


def _detail_context(run: SearchRun) -> dict:
    return {
        **_status_context(run),
        **_results_context(run),
        **_send_context(run),
        "algorithm": run.resolved_algorithm,
    }


@staff_member_required
@require_GET
def run_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    if request.htmx:
        return _status_response(request, run_for_user(request.user, pk, without=LARGE_FIELDS))
    return render(request, DETAIL_TEMPLATE, _detail_context(run_for_user(request.user, pk)))


@staff_member_required
@require_GET
def run_results(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    return render(request, f"{DETAIL_TEMPLATE}#results", _results_context(run))


@staff_member_required
@require_GET
def run_topic_texts(request: HtmxHttpRequest, pk: int, arm: int) -> HttpResponse:
    run = run_for_user(request.user, pk, without=LARGE_FIELDS)
    context = {
        **_send_context(run),
        "run": run,
        "arm": arm,
        "pulls": [pull_view(pull) for pull in pulls_of_arm(run, arm, limit=TEXTS_PER_TOPIC)],
        "total": Pull.objects.filter(run=run, arm=arm).count(),
        "limit": TEXTS_PER_TOPIC,
    }
    if request.htmx:
        return render(request, f"{TEXTS_TEMPLATE}#texts", context)
    topic = next((p.pull.topic for p in context["pulls"] if p.pull.topic_id), None)
    context["topic_name"] = topic.path if topic else f"Synthetic topic #{arm}"
    return render(request, TEXTS_TEMPLATE, context)


@staff_member_required
@require_GET
def run_chart(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk, without=("policy_state", "calibration"))
    oracle = (run.result or {}).get("oracle_top_k_mean")
    svg = run_charts.progress_chart_svg(run.history, k=run.k, oracle=oracle)
    return HttpResponse(svg, content_type="image/svg+xml")


@staff_member_required
@require_GET
def run_calibration_chart(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk, without=("policy_state", "history"))
    calibration = run.calibration or {}
    svg = run_charts.calibration_chart_svg(calibration.get("x", []), calibration.get("y", []))
    return HttpResponse(svg, content_type="image/svg+xml")


# --- Controls and sending to annotation ---------------------------------------------------------


@staff_member_required
@require_POST
def run_control(request: HtmxHttpRequest, pk: int, action: str) -> HttpResponse:
    """Pause, resume or cancel; each takes effect at the end of the round in flight."""
    run = run_for_user(request.user, pk)
    error = ""
    try:
        run = CONTROLS[action](run)
    except RunStateError as exc:
        error = str(exc)
    if request.htmx:
        return _status_response(request, run, action_error=error)
    if error:
        messages.error(request, f"Nothing changed: {error}.")
    else:
        messages.success(request, f"Run {CONTROL_DONE[action]}.")
    return redirect("search:run_detail", pk=run.pk)


def _send_refusal(request: HttpRequest, pulls: list[Pull]) -> str:
    """Why nothing can be sent, or "" when the pulls may go."""
    if pulls:
        return ""
    if request.POST.get("scope") != "top_k" and not request.POST.getlist("pulls"):
        return "Tick the texts to send first: open a topic of the top-k to see its texts."
    return (
        "None of the chosen texts can be sent: only texts with translations that were not "
        "sent before go to annotators."
    )


def _chosen_pulls(run: SearchRun, request: HttpRequest) -> list[Pull]:
    """The pulls the send form names: ticked ones, or every text of the current top-k."""
    pulls = Pull.objects.filter(run=run, human_status=Pull.HumanStatus.NONE).exclude(
        translations={}
    )
    if request.POST.get("scope") == "top_k":
        arms = [row.arm for row in top_topics(run)]
        pulls = pulls.filter(arm__in=arms).order_by("arm", "-difficulty", "id")
    else:
        ids = [int(value) for value in request.POST.getlist("pulls") if value.isdigit()]
        pulls = pulls.filter(pk__in=ids).order_by("id")
    return list(pulls.select_related("topic")[:MAX_SEND])


@staff_member_required
@require_POST
def run_send(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    pulls = _chosen_pulls(run, request)
    error = _send_refusal(request, pulls)
    if not error:
        try:
            sent = human_loop.send_pulls(run, pulls)
        except (CampaignImportError, ValidationError) as exc:
            error = f"The annotation campaign refused the texts: {exc}"
    if error:
        messages.error(request, error)  # at the top of the page, where the reload lands
        return render(request, DETAIL_TEMPLATE, _detail_context(run), status=400)
    run.refresh_from_db(fields=["campaign"])
    assert run.campaign is not None  # send_pulls made or filled one
    messages.success(request, f"Sent {sent} text(s) to annotation campaign “{run.campaign.name}”.")
    return redirect("search:run_detail", pk=run.pk)


# --- Exports -------------------------------------------------------------------------------


@staff_member_required
@require_GET
def run_export_pulls(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    return pulls_jsonl_response(run_for_user(request.user, pk, without=LARGE_FIELDS))


@staff_member_required
@require_GET
def run_export_top_k(request: HttpRequest, pk: int) -> HttpResponse:
    return top_k_json_response(run_for_user(request.user, pk))
