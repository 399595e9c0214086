"""The import job page: progress while a worker imports, then a link to the result."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseStopPolling

from core.http import HtmxHttpRequest
from imports import selectors


@login_required
@require_GET
def job_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = selectors.job_for_user(request.user, pk)
    context = {
        "job": job,
        "kind_label": selectors.kind_label(job),
        "result_url": selectors.result_url(job),
    }
    if request.htmx:
        html = render_to_string("imports/job_detail.html#progress", context, request=request)
        # A finished job answers 286 so htmx stops polling.
        return HttpResponseStopPolling(html) if job.is_finished else HttpResponse(html)
    return render(request, "imports/job_detail.html", context)
