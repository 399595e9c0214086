"""Pages of MT-breaker runs (seed 001). Staff only; thin: parse, call one service, render.

The run page is live like a search run's: its status section polls every 2 s (stopping once
the run is over) and, when the run moved, triggers ``run-changed`` so the results (curves,
chains, costs) and the People section reload. A comparison's progress table polls the same
way, the People section with it.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh, HttpResponseStopPolling

from annotation.models import Campaign
from core.http import HtmxHttpRequest
from core.job_pages import (
    JobFormView,
    control_from_page,
    job_list,
    job_page,
    job_version,
    started,
)
from search.breaker import charts
from search.breaker.data_quality import (
    StatisticsConfigError,
    start_comparison_statistics,
    start_statistics,
)
from search.breaker.forms import SEED_SOURCES, BreakerForm, StatisticsForm
from search.breaker.human_report import calibration_report, campaign_rows, human_report
from search.breaker.humans import (
    SCORING_PROTOCOLS,
    SendError,
    refresh_human_results,
    send_to_annotation,
)
from search.breaker.methods import spec
from search.breaker.records import jsonl_response, samples_tree_name, save_selected_as_samples
from search.breaker.selectors import (
    chain_for_run,
    chain_rows,
    chain_view,
    comparison_rows,
    cost_per_engine,
    run_for_user,
    run_rows,
    runs_for_user,
    statistics_of,
    statistics_table,
)
from search.breaker.services import (
    RunStateError,
    cancel_run,
    pause_run,
    resume_run,
    start_breaker_comparison,
)

DETAIL = "search/breaker/run_detail.html"
DETAIL_URL = "search:breaker_detail"
COMPARISON = "search/breaker/comparison.html"
HUMANS = "search/breaker/_humans.html"
CONTROLS = {"pause": pause_run, "resume": resume_run, "cancel": cancel_run}
CONTROL_DONE = {"pause": "paused", "resume": "resumed", "cancel": "cancelled"}


@staff_member_required
@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    return job_list(request, "search/breaker/run_list.html", run_rows(request.user))


class RunCreate(JobFormView):
    """One run, or a comparison of several methods on the same seeds (its page)."""

    template_name = "search/breaker/run_form.html"
    form_class = BreakerForm

    def start(self, form: BreakerForm) -> HttpResponse:
        runs = start_breaker_comparison(form.to_config(), created_by=self.request.user)
        if len(runs) == 1:
            return started(self.request, f"Run #{runs[0].pk} created.", DETAIL_URL, runs[0])
        messages.success(self.request, f"{len(runs)} runs created, one per method.")
        return redirect(f"{_comparison_url()}?{urlencode({'name': runs[0].comparison})}")


def _comparison_url() -> str:
    return reverse("search:breaker_comparison")


def _humans(runs: list, send_url: str, refresh_url: str, calibration_url: str) -> dict:
    """The "People" section shared by the run and comparison pages."""
    return {
        "report": human_report(runs),
        "campaigns": campaign_rows(runs),
        "protocols": [*SCORING_PROTOCOLS, "translation"],
        "can_send": all(r.status == "finished" for r in runs),
        "send_url": send_url,
        "refresh_url": refresh_url,
        "calibration_url": calibration_url,
    }


def _run_humans(run) -> dict:
    names = ("search:breaker_send", "search:breaker_refresh_humans", "search:breaker_calibration")
    urls = [reverse(name, args=[run.pk]) for name in names]
    return _humans([run], *urls)


def _seeds_from(run) -> str:
    """Where the seeds came from, in the form's words ("A topic tree's text samples")."""
    source = (run.seeds_from or {}).get("from", "")
    return dict(SEED_SOURCES).get(source, source)


def _context(run) -> dict:
    return {
        "run": run,
        "label": spec(run.method).label,
        "seeds_from": _seeds_from(run),
        "version": job_version(run),
        "chains": chain_rows(run),
        "cost": cost_per_engine(run),
        "humans": _run_humans(run),
        **_statistics_context(run),
    }


def _statistics_context(run) -> dict:
    stats = statistics_of(run)
    return {
        "run": run,
        "stats": stats,
        "stats_rows": statistics_table([stats]),
        "stats_headers": [spec(run.method).label],
        "stats_form": StatisticsForm(),
    }


@staff_member_required
@require_GET
def run_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    return job_page(request, DETAIL, run, _context, name="run", changed_event="run-changed")


@staff_member_required
@require_GET
def run_results(request: HttpRequest, pk: int) -> HttpResponse:
    """The results section, reloaded when the run moved, with the People section swapped in
    out of band: its report counts the texts selected so far, and the send form appears once
    the run has finished."""
    context = _context(run_for_user(request.user, pk))
    html = render_to_string(f"{DETAIL}#results", context, request=request)
    return HttpResponse(html + _people(request, context["humans"]))


def _people(request: HttpRequest, humans: dict) -> str:
    """The People section for an out-of-band swap (``hx-swap-oob``) next to a polled part."""
    context = {"humans": humans, "humans_oob": True}
    return render_to_string(HUMANS, context, request=request)


@staff_member_required
@require_GET
def run_chart(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    svg = charts.curves_chart_svg([(spec(run.method).label, run.curves)])
    return HttpResponse(svg, content_type="image/svg+xml")


@staff_member_required
@require_GET
def chain_detail(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    view = chain_view(run, chain_for_run(run, index))
    context = {"run": run, "label": spec(run.method).label, "view": view}
    return render(request, "search/breaker/chain_detail.html", context)


@staff_member_required
@require_http_methods(["GET", "POST"])
def run_statistics(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the statistics section (polled while they are computed); POST: compute them."""
    run = run_for_user(request.user, pk)
    if request.method == "GET":
        context = _statistics_context(run)
        html = render_to_string(f"{DETAIL}#statistics", context, request=request)
        active = context["stats"] is not None and context["stats"].is_active
        return HttpResponse(html) if active else HttpResponseStopPolling(html)
    form = StatisticsForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{f}: {' '.join(str(m) for m in e)}" for f, e in form.errors.items())
        messages.error(request, f"Nothing started: {problems}")
        return redirect("search:breaker_detail", pk=run.pk)
    try:
        start_statistics(run, **form.cleaned_data, requested_by=request.user)
    except StatisticsConfigError as exc:
        messages.error(request, f"Nothing started: {exc}")
    except RunStateError as exc:
        messages.error(request, f"Nothing started: {exc}.")
    else:
        messages.success(request, "The data-quality statistics are queued.")
    return redirect("search:breaker_detail", pk=run.pk)


@staff_member_required
@require_POST
def run_control(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    run = run_for_user(request.user, pk)
    return control_from_page(
        request, run, CONTROLS[action], RunStateError,
        done=f"Run {CONTROL_DONE[action]}.", page="search:breaker_detail",
    )  # fmt: skip


@staff_member_required
@require_GET
def run_export(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    return jsonl_response(run_for_user(request.user, pk))


@staff_member_required
@require_POST
def run_export_samples(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    count = save_selected_as_samples(run)
    messages.success(
        request,
        f"{count} selected texts are text samples of the topic tree “{samples_tree_name(run)}” "
        "(under Topics), ready for search runs and challenge sets.",
    )
    return redirect("search:breaker_detail", pk=pk)


def _comparison(request: HttpRequest) -> tuple[str, list]:
    name = request.GET.get("name") or request.POST.get("name", "")
    visible = set(runs_for_user(request.user).values_list("pk", flat=True))
    runs = [r for r in comparison_rows(name) if r.pk in visible]
    if not runs:
        raise Http404("No such comparison.")
    return name, runs


@staff_member_required
@require_GET
def comparison(request: HtmxHttpRequest) -> HttpResponse:
    name, runs = _comparison(request)
    if request.htmx:
        return _comparison_progress(request, name, runs)
    return render(request, COMPARISON, _comparison_context(name, runs))


def _comparison_progress(request: HttpRequest, name: str, runs: list) -> HttpResponse:
    """The polled progress table and, out of band, the People section (its report counts the
    texts selected so far); once every run has ended the whole page is reloaded, since sending
    to annotation and the statistics below only make sense for finished runs."""
    if all(run.is_finished for run in runs):
        return HttpResponseClientRefresh()
    rows = [(run, spec(run.method).label) for run in runs]
    context = {"name": name, "rows": rows, "active": True, "steps_done": _steps_done(runs)}
    html = render_to_string(f"{COMPARISON}#progress", context, request=request)
    return HttpResponse(html + _people(request, _comparison_humans(name, runs)))


def _steps_done(runs: list) -> int:
    return sum(run.steps_done for run in runs)


def _comparison_humans(name: str, runs: list) -> dict:
    query = f"?{urlencode({'name': name})}"
    names = (
        "search:breaker_comparison_send",
        "search:breaker_comparison_refresh",
        "search:breaker_comparison_calibration",
    )
    return _humans(runs, *[reverse(n) + query for n in names])


def _comparison_statistics(name: str, runs: list) -> dict:
    """Table 2 with one column per run, and whether any column is being computed."""
    rows = [(run, spec(run.method).label) for run in runs]
    stats = [statistics_of(run) for run in runs]
    return {
        "name": name,
        "runs_finished": all(run.is_finished for run in runs),
        "stats_rows": statistics_table(stats),
        "stats_headers": [label for _, label in rows],
        "signatures": sorted({s.chrf_signature for s in stats if s and s.chrf_signature}),
        "missing": sum(1 for s in stats if s is None or s.status != "done"),
        "computing": sum(1 for s in stats if s is not None and s.is_active),
        "stats_form": StatisticsForm(),
    }


def _comparison_context(name: str, runs: list) -> dict:
    rows = [(run, spec(run.method).label) for run in runs]
    return {
        "name": name,
        "rows": rows,
        "active": not all(run.is_finished for run in runs),
        "steps_done": _steps_done(runs),
        "humans": _comparison_humans(name, runs),
        **_comparison_statistics(name, runs),
    }


@staff_member_required
@require_http_methods(["GET", "POST"])
def comparison_statistics(request: HttpRequest) -> HttpResponse:
    """GET: the Data quality section (polled while statistics are computed); POST: compute
    them for every run of the comparison with the same engines."""
    name, runs = _comparison(request)
    if request.method == "GET":
        context = _comparison_statistics(name, runs)
        html = render_to_string(f"{COMPARISON}#statistics", context, request=request)
        return HttpResponse(html) if context["computing"] else HttpResponseStopPolling(html)
    back = redirect(f"{_comparison_url()}?{urlencode({'name': name})}#data-quality")
    form = StatisticsForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{f}: {' '.join(str(m) for m in e)}" for f, e in form.errors.items())
        messages.error(request, f"Nothing started: {problems}")
        return back
    try:
        result = start_comparison_statistics(runs, **form.cleaned_data, requested_by=request.user)
    except StatisticsConfigError as exc:
        messages.error(request, f"Nothing started: {exc}")
    except RunStateError as exc:
        messages.error(request, f"Nothing started: {exc}.")
    else:
        labels = {run.pk: spec(run.method).label for run in runs}
        skipped = "".join(
            f" Not {labels[pk]} (#{pk}): {why}." for pk, why in result.skipped.items()
        )
        messages.success(
            request,
            f"The data-quality statistics of {len(result.started)} run(s) are queued.{skipped}",
        )
    return back


# --- People: send to annotation, human results, calibration ----------------------------------


def _send(request: HttpRequest, runs: list) -> Campaign | SendError:
    try:
        return send_to_annotation(
            runs,
            protocol=request.POST.get("protocol", ""),
            overlap=request.POST.get("overlap", "1"),
            created_by=request.user,
        )
    except SendError as exc:
        return exc


def _sent(request: HttpRequest, campaign: Campaign) -> None:
    messages.success(
        request,
        f"Campaign “{campaign.name}” has {campaign.items.count()} items: open it under "
        "Campaigns below and share its sign-up link with annotators.",
    )


@staff_member_required
@require_POST
def run_send(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    result = _send(request, [run])
    if isinstance(result, SendError):
        context = _context(run) | {"send_errors": result.errors}
        return render(request, DETAIL, context, status=400)
    _sent(request, result)
    return redirect("search:breaker_detail", pk=run.pk)


@staff_member_required
@require_POST
def comparison_send(request: HttpRequest) -> HttpResponse:
    name, runs = _comparison(request)
    result = _send(request, runs)
    if isinstance(result, SendError):
        context = _comparison_context(name, runs) | {"send_errors": result.errors}
        return render(request, "search/breaker/comparison.html", context, status=400)
    _sent(request, result)
    return redirect(f"{_comparison_url()}?{urlencode({'name': name})}")


@staff_member_required
@require_POST
def run_refresh_humans(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    count = refresh_human_results([run])
    messages.success(request, f"Human results read again: {count} text(s) changed.")
    return redirect("search:breaker_detail", pk=run.pk)


@staff_member_required
@require_POST
def comparison_refresh(request: HttpRequest) -> HttpResponse:
    name, runs = _comparison(request)
    count = refresh_human_results(runs)
    messages.success(request, f"Human results read again: {count} text(s) changed.")
    return redirect(f"{_comparison_url()}?{urlencode({'name': name})}")


CALIBRATION = "search/breaker/calibration.html"


@staff_member_required
@require_GET
def run_calibration(request: HttpRequest, pk: int) -> HttpResponse:
    run = run_for_user(request.user, pk)
    context = {"run": run, "title": run.name, "report": calibration_report([run])}
    return render(request, CALIBRATION, context)


@staff_member_required
@require_GET
def comparison_calibration(request: HttpRequest) -> HttpResponse:
    name, runs = _comparison(request)
    context = {"comparison": name, "title": name, "report": calibration_report(runs)}
    return render(request, CALIBRATION, context)


@staff_member_required
@require_GET
def comparison_chart(request: HttpRequest) -> HttpResponse:
    _, runs = _comparison(request)
    svg = charts.curves_chart_svg([(spec(r.method).label, r.curves) for r in runs])
    return HttpResponse(svg, content_type="image/svg+xml")


@staff_member_required
@require_GET
def comparison_tradeoff_chart(request: HttpRequest) -> HttpResponse:
    _, runs = _comparison(request)
    points = []
    for run in runs:
        stats = statistics_of(run)
        values = stats.values if stats and stats.status == "done" else {}
        if values.get("quality") is not None:
            points.append((spec(run.method).label, values["diversity_embd"],
                           values["diversity_chrf"], values["quality"]))  # fmt: skip
    svg = charts.diversity_difficulty_svg(points)
    return HttpResponse(svg, content_type="image/svg+xml")
