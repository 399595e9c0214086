"""The import job page: progress while a worker imports, then a link to the result."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.http import HtmxHttpRequest
from core.job_pages import status_partial
from imports import selectors

DETAIL = "imports/job_detail.html"


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
        return status_partial(request, DETAIL, context, job)
    return render(request, DETAIL, context)
