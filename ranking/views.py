"""Pages of the ranking app, under ``/ranking/``: the list, the new-ranking form and a ranking's
page with its table, charts and downloads. Thin: parse, call one service or selector, render.

The discriminability pages (a subset's ranking against random subsets, issue 41) will live in
their own module beside this one and read the same rankings.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from core.http import HtmxHttpRequest, download
from ranking import charts, selectors, tables
from ranking.forms import RankingForm
from ranking.models import SystemRanking
from ranking.services import RankingError, RankingStateError, cancel_ranking, start_ranking


@staff_member_required
@require_GET
def ranking_list(request: HttpRequest) -> HttpResponse:
    rankings = selectors.rankings_for_user(request.user)[:200]
    return render(request, "ranking/ranking_list.html", {"rankings": rankings})


def _new_page(request: HttpRequest, form: RankingForm, status: int = 200) -> HttpResponse:
    return render(request, "ranking/ranking_new.html", {"form": form}, status=status)


@staff_member_required
@require_http_methods(["GET", "POST"])
def ranking_new(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        # The GET parameters choose the input (a link from a dataset, the no-script refresh or
        # htmx when the input changes): they preset the form, they are not a submission.
        form = RankingForm(initial=request.GET.dict(), user=request.user)
        if request.htmx:
            return render(request, "ranking/ranking_new.html#source-fields", {"form": form})
        return _new_page(request, form)
    form = RankingForm(request.POST, user=request.user)
    if not form.is_valid():
        return _new_page(request, form, status=400)
    try:
        ranking = start_ranking(**form.service_arguments(), created_by=request.user)
    except RankingError as exc:
        for field, message in exc.errors.items():
            form.add_error(field if field in form.fields else None, message)
        return _new_page(request, form, status=400)
    messages.success(request, f"Ranking {ranking.name!r} queued.")
    return redirect("ranking:ranking_detail", pk=ranking.pk)


@staff_member_required
@require_GET
def ranking_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    ranking = selectors.ranking_for_user(request.user, pk)
    context: dict[str, Any] = {"ranking": ranking}
    if ranking.status == SystemRanking.Status.DONE:
        context["page"] = selectors.ranking_page(ranking)
    if request.htmx:
        html = render_to_string("ranking/ranking_detail.html#status", context, request=request)
        # A finished ranking answers 286 so htmx stops polling.
        return HttpResponseStopPolling(html) if ranking.is_finished else HttpResponse(html)
    return render(request, "ranking/ranking_detail.html", context)


def _finished(request: HttpRequest, pk: int) -> SystemRanking | HttpResponse:
    ranking = selectors.ranking_for_user(request.user, pk)
    if ranking.status != SystemRanking.Status.DONE:
        return HttpResponse(
            f"The ranking is {ranking.status}; this exists once it is done.",
            status=409,
            content_type="text/plain; charset=utf-8",
        )
    return ranking


@staff_member_required
@require_GET
def ranking_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The ranking as CSV, LaTeX, Typst or JSON (``fmt`` is one of ``tables.FORMATS``)."""
    ranking = _finished(request, pk)
    if isinstance(ranking, HttpResponse):
        return ranking
    content_type, extension = tables.FORMATS[fmt]
    filename = f"ranking-{ranking.pk}.{extension}"
    return download(tables.render(ranking.result, fmt), filename, content_type)


@staff_member_required
@require_GET
def ranking_chart(request: HttpRequest, pk: int, chart: str) -> HttpResponse:
    ranking = _finished(request, pk)
    if isinstance(ranking, HttpResponse):
        return ranking
    draw = charts.heatmap_svg if chart == "heatmap" else charts.means_svg
    return HttpResponse(draw(ranking.result), content_type="image/svg+xml")


@staff_member_required
@require_POST
def ranking_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    ranking = selectors.ranking_for_user(request.user, pk)
    try:
        cancel_ranking(ranking)
    except RankingStateError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Ranking cancelled.")
    return redirect("ranking:ranking_detail", pk=ranking.pk)
