"""Admin pages: the live campaign dashboard, its charts and the export downloads.

One view per page; htmx polls get the page's ``#live`` partial, and a closed campaign answers
with ``HttpResponseStopPolling`` (status 286) so the browser stops asking. Every campaign is
looked up through ``annotation.access`` (404 for non-staff, as if it did not exist).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseStopPolling

from annotation import access, exports, progress, selectors
from annotation.models import Campaign
from core.http import HtmxHttpRequest

POLL_SECONDS = 5


def _render_live(
    request: HtmxHttpRequest, template: str, context: dict, live: bool
) -> HttpResponse:
    """Full page, or the ``#live`` partial for htmx polls; status 286 stops a finished poll."""
    if not request.htmx:
        return render(request, template, context)
    response = render(request, f"{template}#live", context)
    if not live:
        response.status_code = HttpResponseStopPolling.status_code
    return response


@login_required
@never_cache
@require_GET
def dashboard_index(request: HtmxHttpRequest) -> HttpResponse:
    """Progress of every campaign; polls while any campaign is still open or paused."""
    if not request.user.is_staff:
        raise Http404("No such page")
    rows = progress.campaigns_progress(access.campaigns_visible_to(request.user))
    live = any(row.is_live for row in rows)
    context = {"rows": rows, "live": live, "poll_seconds": POLL_SECONDS}
    return _render_live(request, "annotation/dashboard_index.html", context, live)


@login_required
@never_cache
@require_GET
def dashboard_campaign(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """One campaign: progress, annotators with QC verdicts, agreement, charts, exports."""
    campaign = access.campaign_for_admin(request.user, pk)
    version = progress.version_key(campaign)
    campaign_progress = progress.campaign_progress(campaign)
    annotators = progress.annotator_progress(campaign, version=version)
    context = {
        "campaign": campaign,
        "progress": campaign_progress,
        "annotators": annotators,
        "median_seconds": progress.median_seconds(annotators),
        "active_now": sum(1 for row in annotators if row.active_now),
        "agreement": progress.campaign_agreement(campaign, version),
        "over_overlap": (
            selectors.over_overlap_items(campaign) if campaign_progress.over_overlap_items else []
        ),
        "version": version,
        "charts": _charts(campaign),
        "export_formats": _export_links(campaign),
        "live": campaign_progress.is_live,
        "poll_seconds": POLL_SECONDS,
    }
    live = campaign_progress.is_live
    return _render_live(request, "annotation/dashboard_campaign.html", context, live)


def _charts(campaign: Campaign) -> list[tuple[str, str]]:
    protocol = campaign.get_protocol()
    scores = "Answers per option" if protocol.has_options else "Scores"
    charts = [
        ("scores", scores),
        ("progress", "Progress over time"),
        ("annotators", "Progress per annotator"),
    ]
    if protocol.has_scores:
        charts.append(("annotator-scores", "Scores per annotator"))
    return charts


def _export_links(campaign: Campaign) -> list[tuple[str, str, bool]]:
    """(label, format, aggregate) of the download buttons that make sense for this protocol."""
    links = [
        ("Annotations (JSONL)", "jsonl", False),
        ("Annotations (CSV)", "csv", False),
        ("Per item (JSONL)", "jsonl", True),
        ("Per item (CSV)", "csv", True),
        ("Items to re-import (JSONL)", "items-jsonl", False),
    ]
    # A protocol's own formats go between the per-annotation and the per-item exports.
    links[2:2] = campaign.get_protocol().extra_export_formats
    return links


@login_required
@require_GET
def dashboard_chart(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    """One chart as SVG; the URL carries the campaign version, so it is cached while unchanged."""
    campaign = access.campaign_for_admin(request.user, pk)
    if name not in progress.CHARTS:
        raise Http404("No such chart")
    svg = progress.chart_svg(campaign, name)
    response = HttpResponse(svg, content_type="image/svg+xml")
    response["Cache-Control"] = "private, max-age=300"
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


@login_required
@require_GET
def export_download(request: HttpRequest, pk: int) -> HttpResponseBase:
    """Stream an export as a download: ``?format=jsonl|csv|mqm-tsv&aggregate=1``."""
    campaign = access.campaign_for_admin(request.user, pk)
    fmt = request.GET.get("format", "jsonl")
    aggregate = request.GET.get("aggregate") in {"1", "true", "yes"}
    try:
        chunks = exports.stream_export(campaign, fmt, aggregate=aggregate)
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    spec = exports.ExportRequest(campaign, fmt, aggregate)
    response = StreamingHttpResponse(chunks, content_type=spec.content_type)
    response["Content-Disposition"] = f'attachment; filename="{spec.filename}"'
    response["Cache-Control"] = "no-store"
    return response
