"""What every long job's page shares: the version its polling carries, the polled status block
(``templates/platform/_job_status.html``, rendered as the page's ``status`` partial) and the
answer of its control buttons (cancel, pause, resume). Runs, transfers, mining jobs, rule jobs
and evaluations each had these written out with only the names changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django_htmx.http import HttpResponseStopPolling

from core.http import HtmxHttpRequest

__all__ = ["control_from_page", "job_page", "job_version", "polled_status"]


def job_version(job: Any) -> str:
    """A token that changes whenever the job's row does; the page polls with ``?seen=``."""
    return str(int(job.updated_at.timestamp() * 1_000_000))


def job_page(
    request: HtmxHttpRequest,
    template: str,
    job: Any,
    page_context: Callable[[Any], dict[str, Any]],
    *,
    name: str,
    changed_event: str = "",
    poll_page: bool = False,
) -> HttpResponse:
    """A job's page (``page_context(job)``), or for its poll the status partial alone, the job
    under ``name`` (:func:`polled_status`); with ``poll_page`` the partial has the whole page's
    context (a status block that shows the result once the job is done)."""
    if not request.htmx:
        return render(request, template, page_context(job))
    context = page_context(job) if poll_page else {name: job, "version": job_version(job)}
    return polled_status(request, template, context, job, changed_event=changed_event)


def polled_status(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    job: Any,
    *,
    changed_event: str = "",
) -> HttpResponse:
    """The page's ``status`` partial for its poll: polling stops once the job ended, and when
    the job moved since the page's version (``context["version"]``) the page hears of it:
    ``changed_event`` (an htmx event its other parts reload on), else, once the job ended, a
    reload of the whole page."""
    html = render_to_string(f"{template}#status", context, request=request)
    response = HttpResponseStopPolling(html) if job.is_finished else HttpResponse(html)
    if request.GET.get("seen") != context["version"]:
        if changed_event:
            response["HX-Trigger"] = changed_event
        elif job.is_finished:
            response["HX-Refresh"] = "true"
    return response


def control_from_page(
    request: HttpRequest,
    job: Any,
    control: Callable[[Any], Any],
    state_error: type[Exception],
    *,
    done: str,
    page: str,
) -> HttpResponse:
    """A control button (cancel, pause, resume): ``control(job)``, a message saying what
    happened (``done``, or why nothing changed), then back to the job's page (URL name
    ``page``)."""
    try:
        control(job)
    except state_error as exc:
        messages.error(request, f"Nothing changed: {exc}.")
    else:
        messages.success(request, done)
    return redirect(page, pk=job.pk)
