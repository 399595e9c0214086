"""Pages of replay runs, under ``/ranking/replays/``: the list, the new-run form and a run's page
(status, curves, summary). Thin: parse, call one service or selector, render."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from core.http import HtmxHttpRequest
from core.job_pages import cancel_view, job_page, job_version
from ranking.replays import charts, selectors
from ranking.replays.forms import ReplayForm
from ranking.replays.models import ReplayRun
from ranking.replays.services import ReplayStateError, cancel_replay, start_replay
from ranking.views import result_chart, start_from_form

NEW = "ranking/replay_new.html"
DETAIL = "ranking/replay_detail.html"


@staff_member_required
@require_GET
def replay_list(request: HttpRequest) -> HttpResponse:
    runs = selectors.replays_for_user(request.user).defer("judgments", "state", "result")[:200]
    return render(request, "ranking/replay_list.html", {"runs": runs})


@staff_member_required
@require_http_methods(["GET", "POST"])
def replay_new(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = ReplayForm(request.POST, user=request.user)
        return start_from_form(request, form, start_replay, NEW, page="ranking:replay_detail")
    form = ReplayForm(initial=request.GET.dict(), user=request.user)
    return render(request, NEW, {"form": form})


def _context(run: ReplayRun) -> dict[str, Any]:
    return {"run": run, "version": job_version(run), "result": run.result}


@staff_member_required
@require_GET
def replay_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    run = selectors.replay_for_user(request.user, pk)
    return job_page(request, DETAIL, run, _context, name="run")


@staff_member_required
@require_GET
def replay_chart(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.replay_for_user(request.user, pk)
    return result_chart(run, charts.curves_svg)


replay_cancel = cancel_view(
    selectors.replay_for_user, cancel_replay, ReplayStateError,
    done="Replay cancelled.", page="ranking:replay_detail",
)  # fmt: skip
