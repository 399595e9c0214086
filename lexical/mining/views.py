"""Pages of mining jobs: the "Mine concepts" form, the job list and a job's page (progress
polled with htmx every 2 s, the filters' counts and the mined concepts). Staff only; thin."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from core import job_pages
from core.http import HtmxHttpRequest
from lexical.mining.forms import MiningForm
from lexical.mining.params import MiningParamsError
from lexical.mining.selectors import concepts_of, mining_job_for_user, mining_jobs_for_user
from lexical.mining.services import MiningStateError, cancel_mining, start_mining

DETAIL = "lexical/mining/job_detail.html"
JOB_URL = "lexical:mining_job"


@staff_member_required
@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    jobs = mining_jobs_for_user(request.user)
    return job_pages.job_list(request, "lexical/mining/job_list.html", jobs)


class JobCreate(job_pages.JobFormView):
    """The "Mine concepts" form; ``?corpus=`` picks the corpus."""

    template_name = "lexical/mining/job_form.html"
    refusals = (MiningParamsError, MiningStateError)

    def get_form(self, data: Any = None, files: Any = None) -> MiningForm:
        if data is not None:
            return MiningForm(data)
        corpus = self.request.GET.get("corpus", "")
        return MiningForm(initial={"corpus": corpus if corpus.isdigit() else None})

    def refused(self, form: MiningForm, exc: Exception) -> None:
        if isinstance(exc, MiningParamsError):
            form.add_param_errors(exc.errors)
        else:  # the corpus cannot be mined now
            form.add_error("corpus", str(exc))

    def start(self, form: MiningForm) -> HttpResponse:
        corpus = form.cleaned_data["corpus"]
        job = start_mining(corpus, form.to_params(), created_by=self.request.user)
        return job_pages.started(self.request, f"Mining job #{job.pk} is queued.", JOB_URL, job)


@staff_member_required
@require_GET
def job_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    # Once the job ends, its concepts and stats appear with the whole page (no changed_event).
    job = mining_job_for_user(request.user, pk)
    return job_pages.job_page(request, DETAIL, job, _page_context, name="job")


def _page_context(job) -> dict:
    return {"job": job, "version": job_pages.job_version(job), "concepts": concepts_of(job)}


job_cancel = job_pages.cancel_view(
    mining_job_for_user, cancel_mining, MiningStateError, done="Mining job cancelled.", page=JOB_URL
)
