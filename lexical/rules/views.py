"""Pages of rule generation (seed 004 §3). Staff only; thin: parse, call one service or selector,
render. The job list and a job page poll every 2 s while a job runs (a job page reloads its
concept table when the job moved); a concept page shows the rules of every generator side by
side."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseStopPolling

from core.http import HtmxHttpRequest
from core.job_pages import JobFormView, cancel_view, job_page, job_version, started
from lexical.rules.forms import RuleJobForm
from lexical.rules.selectors import (
    concept_for_user,
    concept_rules,
    job_concepts,
    job_for_user,
    jobs_for_user,
    simulated_engines,
)
from lexical.rules.services import JobStateError, cancel_job, start_rule_jobs

DETAIL = "lexical/rules/job_detail.html"
LIST = "lexical/rules/job_list.html"


@staff_member_required
@require_GET
def job_list(request: HtmxHttpRequest) -> HttpResponse:
    """The jobs; while one on the page is queued or running, the table polls itself every 2 s
    and stops once every job on it has ended."""
    page = Paginator(jobs_for_user(request.user), 50).get_page(request.GET.get("page"))
    active = any(not job.is_finished for job in page)
    context = {"page": page, "active": active}
    if not request.htmx:
        return render(request, LIST, context)
    html = render_to_string(f"{LIST}#jobs", context, request=request)
    return HttpResponse(html) if active else HttpResponseStopPolling(html)


class JobCreate(JobFormView):
    """One rule job per ticked engine; ``?mining_job=``, ``?selection=`` or ``?concepts=``
    picks the concepts' source."""

    template_name = "lexical/rules/job_form.html"

    def get_form(self, data: Any = None, files: Any = None) -> RuleJobForm:
        if data is not None:
            return RuleJobForm(data)
        initial = {"source": "mining_job"}
        for key in ("mining_job", "selection", "concepts"):
            if self.request.GET.get(key, "").isdigit():
                initial = {"source": key, key: self.request.GET[key]}
        return RuleJobForm(initial=initial)

    def start(self, form: RuleJobForm) -> HttpResponse:
        jobs = start_rule_jobs(form.to_config(), created_by=self.request.user)
        numbers = ", ".join(f"#{job.pk}" for job in jobs)
        message = f"Rule job(s) {numbers} queued, one per engine."
        if len(jobs) == 1:
            return started(self.request, message, "lexical:rule_job", jobs[0])
        messages.success(self.request, message)
        return redirect("lexical:rule_job_list")


@staff_member_required
@require_GET
def job_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = job_for_user(request.user, pk)
    return job_page(request, DETAIL, job, _page_context, name="job", changed_event="rules-changed")


def _page_context(job) -> dict:
    return {
        "job": job,
        "version": job_version(job),
        "outcomes": job_concepts(job),
        "simulated": job.engine in simulated_engines([job.engine]),
    }


@staff_member_required
@require_GET
def job_concept_table(request: HttpRequest, pk: int) -> HttpResponse:
    job = job_for_user(request.user, pk)
    return render(request, f"{DETAIL}#concepts", {"job": job, "outcomes": job_concepts(job)})


job_cancel = cancel_view(
    job_for_user, cancel_job, JobStateError, done="Rule job cancelled.", page="lexical:rule_job"
)


@staff_member_required
@require_GET
def concept_rule_table(request: HttpRequest, concept_id: int) -> HttpResponse:
    table = concept_rules(concept_for_user(request.user, concept_id))
    return render(request, "lexical/rules/concept_rules.html", {"table": table})
