"""What every long job's pages share: the list of a kind's jobs, the form that starts one
(:class:`JobFormView`, on ``templates/platform/job_form.html``), the version its polling
carries, the polled status block (``templates/platform/_job_status.html``, rendered as the
page's ``status`` partial) and the answer of its control buttons (cancel, pause, resume).
Runs, transfers, mining jobs, rule jobs and evaluations each had these written out with only
the names changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import URLPattern, path
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from core.http import HtmxHttpRequest
from rounds import JobConfigError

__all__ = [
    "JOBS_PER_PAGE",
    "JobFormView",
    "cancel_view",
    "control_from_page",
    "control_paths",
    "job_list",
    "job_page",
    "job_paths",
    "job_version",
    "polled_status",
    "started",
    "status_partial",
]

JOBS_PER_PAGE = 50


def job_list(
    request: HttpRequest, template: str, jobs: QuerySet | list, **context: Any
) -> HttpResponse:
    """A kind's jobs, newest first as ``jobs`` orders them, a page of them at a time
    (``?page=``) under ``page``."""
    page = Paginator(jobs, JOBS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, template, {"page": page, **context})


def started(request: HttpRequest, message: str, page: str, job: Any) -> HttpResponse:
    """After a form started ``job``: ``message`` (it stays true while the polled status moves
    on: queued, running, finished) and the job's page (URL name ``page``)."""
    messages.success(request, message)
    return redirect(page, pk=job.pk)


@method_decorator(staff_member_required, name="dispatch")
class JobFormView(View):
    """The page of the form that starts a kind of job (staff only).

    GET shows :meth:`get_form`; POST starts the job with :meth:`start` once the form is valid
    (it answers where to go, usually :func:`started`). A configuration the service refuses
    (``refusals``, :class:`rounds.JobConfigError` unless a kind says otherwise) goes back on
    the form's fields through :meth:`refused`, and the form comes back with a 400.
    """

    http_method_names = ["get", "post"]
    template_name: str
    form_class: type[forms.BaseForm]
    refusals: tuple[type[Exception], ...] = (JobConfigError,)

    def get_form(self, data: Any = None, files: Any = None) -> Any:
        """The form; without data, as the page first shows it (``?from=`` and the like)."""
        return self.form_class(data, files) if data is not None else self.form_class()

    def context(self, form: Any) -> dict[str, Any]:
        return {"form": form}

    def start(self, form: Any) -> HttpResponse:
        raise NotImplementedError

    def refused(self, form: Any, exc: Exception) -> None:
        form.add_config_errors(exc.errors)  # type: ignore[attr-defined]

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, self.template_name, self.context(self.get_form()))

    def post(self, request: HttpRequest) -> HttpResponse:
        form = self.get_form(request.POST, request.FILES)
        if form.is_valid():
            try:
                return self.start(form)
            except self.refusals as exc:
                self.refused(form, exc)
        return render(request, self.template_name, self.context(form), status=400)


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
    response = status_partial(request, template, context, job)
    if request.GET.get("seen") != context["version"]:
        if changed_event:
            response["HX-Trigger"] = changed_event
        elif job.is_finished:
            response["HX-Refresh"] = "true"
    return response


def status_partial(
    request: HttpRequest, template: str, context: dict[str, Any], job: Any
) -> HttpResponse:
    """The page's ``status`` partial; a 286 once the job ended, so htmx stops polling."""
    html = render_to_string(f"{template}#status", context, request=request)
    return HttpResponseStopPolling(html) if job.is_finished else HttpResponse(html)


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


def job_paths(
    prefix: str,
    name: str,
    *,
    jobs: Callable[..., HttpResponse],
    new: Callable[..., HttpResponse],
    detail: Callable[..., HttpResponse],
    cancel: Callable[..., HttpResponse],
) -> list[URLPattern]:
    """The standard URLs of a kind of job: the list of ``jobs`` at ``{prefix}`` (named
    ``{name}_list``), the ``new`` job's form at ``{prefix}new/`` (``{name}_new``), a job's page
    ``{prefix}<int:pk>/`` (``{name}_detail``) and its Cancel button ``{prefix}<int:pk>/cancel/``
    (``{name}_cancel``)."""
    return [
        path(prefix, jobs, name=f"{name}_list"),
        path(f"{prefix}new/", new, name=f"{name}_new"),
        path(f"{prefix}<int:pk>/", detail, name=f"{name}_detail"),
        path(f"{prefix}<int:pk>/cancel/", cancel, name=f"{name}_cancel"),
    ]


def control_paths(prefix: str, view: Callable[..., HttpResponse], name: str) -> list[URLPattern]:
    """The URLs of a run's pause, resume and cancel buttons: ``{prefix}<int:pk>/pause/``
    (named ``{name}_pause``) and so on, each calling ``view`` with ``action``."""
    return [
        path(f"{prefix}<int:pk>/{action}/", view, {"action": action}, name=f"{name}_{action}")
        for action in ("pause", "resume", "cancel")
    ]


def cancel_view(
    job_for_user: Callable[[Any, int], Any],
    cancel: Callable[[Any], Any],
    state_error: type[Exception],
    *,
    done: str,
    page: str,
) -> Callable[..., HttpResponse]:
    """The view of a job page's Cancel button (staff, POST): ``cancel`` the user's job
    (``job_for_user``), then back to its page (:func:`control_from_page`)."""

    @staff_member_required
    @require_POST
    def cancel_job(request: HttpRequest, pk: int) -> HttpResponse:
        job = job_for_user(request.user, pk)
        return control_from_page(request, job, cancel, state_error, done=done, page=page)

    return cancel_job
