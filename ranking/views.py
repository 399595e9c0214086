"""Pages of the ranking app, under ``/ranking/``: the list, the new-ranking form and a ranking's
page with its table, charts and downloads. Thin: parse, call one service or selector, render.

The discrimination analyses' and replay runs' pages (``ranking/subsets/views.py``,
``ranking/replays/views.py``) share the helpers here: a job started from its form, and a result
(its page, charts and downloads) read only once the job is done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from core.http import HtmxHttpRequest
from core.job_pages import cancel_view, job_page, job_version
from ranking import charts, downloads, selectors
from ranking.forms import RankingForm
from ranking.models import RankingJob
from ranking.replays.models import ReplayRun
from ranking.services import RankingStateError, cancel_ranking, start_ranking
from rounds import JobConfigError

DETAIL = "ranking/ranking_detail.html"
NEW = "ranking/ranking_new.html"


@staff_member_required
@require_GET
def ranking_list(request: HttpRequest) -> HttpResponse:
    rankings = selectors.rankings_for_user(request.user)[:200]
    return render(request, "ranking/ranking_list.html", {"rankings": rankings})


def start_from_form(
    request: HttpRequest, form: Any, start_job: Callable[..., Any], template: str, *,
    page: str,
) -> HttpResponse:  # fmt: skip
    """A job started from a bound form's ``service_arguments()``: its page, or the form again
    (400) with each refusal of the start service on its field."""
    if form.is_valid():
        try:
            job = start_job(**form.service_arguments(), created_by=request.user)
        except JobConfigError as exc:
            for field, message in exc.errors.items():
                form.add_error(field if field in form.fields else None, message)
        else:
            messages.success(request, f"{job.untitled} {job.name!r} queued.")
            return redirect(page, pk=job.pk)
    return render(request, template, {"form": form}, status=400)


def not_done_page(job: RankingJob | ReplayRun) -> HttpResponse | None:
    """A 409 that says why the job's result cannot be read yet; None once it is done."""
    reason = job.not_done_reason()
    if not reason:
        return None
    return HttpResponse(f"{reason.capitalize()}.", status=409,
                        content_type="text/plain; charset=utf-8")  # fmt: skip


def result_chart(
    job: RankingJob | ReplayRun, draw: Callable[[dict[str, Any]], bytes]
) -> HttpResponse:
    """The chart ``draw`` makes of the job's result, as SVG; the 409 while it is not done."""
    return not_done_page(job) or HttpResponse(draw(job.result), content_type="image/svg+xml")


@staff_member_required
@require_http_methods(["GET", "POST"])
def ranking_new(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = RankingForm(request.POST, user=request.user)
        return start_from_form(request, form, start_ranking, NEW, page="ranking:ranking_detail")
    # The GET parameters choose the input (a link from a dataset, the no-script refresh or htmx
    # when the input changes): they preset the form, they are not a submission.
    form = RankingForm(initial=request.GET.dict(), user=request.user)
    template = f"{NEW}#source-fields" if request.htmx else NEW
    return render(request, template, {"form": form})


def result_page(
    request: HtmxHttpRequest, template: str, job: RankingJob, *, name: str,
    page_of: Callable[[Any], dict[str, Any]],
) -> HttpResponse:  # fmt: skip
    """A ranking job's page: the job under ``name`` and, once it is done, what its result shows
    (``page_of(job)``, as ``page``). Its status block shows the result, so its poll reads it."""

    def context(job: RankingJob) -> dict[str, Any]:
        done = job.status == job.Status.DONE
        return {name: job, "version": job_version(job), **({"page": page_of(job)} if done else {})}

    return job_page(request, template, job, context, name=name, poll_page=True)


@staff_member_required
@require_GET
def ranking_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    ranking = selectors.ranking_for_user(request.user, pk)
    return result_page(request, DETAIL, ranking, name="ranking", page_of=selectors.ranking_page)


@staff_member_required
@require_GET
def ranking_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The ranking as CSV, LaTeX, Typst or JSON (``fmt`` is one of ``tables.FORMATS``)."""
    ranking = selectors.ranking_for_user(request.user, pk)
    return not_done_page(ranking) or downloads.result_file(ranking, fmt)


@staff_member_required
@require_GET
def ranking_chart(request: HttpRequest, pk: int, chart: str) -> HttpResponse:
    ranking = selectors.ranking_for_user(request.user, pk)
    return result_chart(ranking, charts.heatmap_svg if chart == "heatmap" else charts.means_svg)


ranking_cancel = cancel_view(
    selectors.ranking_for_user, cancel_ranking, RankingStateError,
    done="Ranking cancelled.", page="ranking:ranking_detail",
)  # fmt: skip
