"""Pages of mining jobs: the "Mine concepts" form, the job list and a job's page (progress
polled with htmx every 2 s, the filters' counts and the mined concepts). Staff only; thin."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.http import HtmxHttpRequest
from core.job_pages import control_from_page, job_page, job_version
from lexical.mining.forms import MiningForm
from lexical.mining.params import MiningParamsError
from lexical.mining.selectors import concepts_of, mining_job_for_user, mining_jobs_for_user
from lexical.mining.services import MiningStateError, cancel_mining, start_mining

DETAIL = "lexical/mining/job_detail.html"


@staff_member_required
@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(mining_jobs_for_user(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "lexical/mining/job_list.html", {"page": page})


@staff_member_required
@require_http_methods(["GET", "POST"])
def job_create(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        corpus = request.GET.get("corpus", "")
        form = MiningForm(initial={"corpus": corpus if corpus.isdigit() else None})
        return render(request, "lexical/mining/job_form.html", {"form": form})
    form = MiningForm(request.POST)
    if form.is_valid():
        try:
            job = start_mining(
                form.cleaned_data["corpus"], form.to_params(), created_by=request.user
            )
        except MiningParamsError as exc:
            form.add_param_errors(exc.errors)
        except MiningStateError as exc:
            form.add_error("corpus", str(exc))
        else:
            messages.success(request, f"Mining job #{job.pk} is queued.")
            return redirect("lexical:mining_job", pk=job.pk)
    return render(request, "lexical/mining/job_form.html", {"form": form}, status=400)


@staff_member_required
@require_GET
def job_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    # Once the job ends, its concepts and stats appear with the whole page (no changed_event).
    job = mining_job_for_user(request.user, pk)
    return job_page(request, DETAIL, job, _page_context, name="job")


def _page_context(job) -> dict:
    return {"job": job, "version": job_version(job), "concepts": concepts_of(job)}


@staff_member_required
@require_POST
def job_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    job = mining_job_for_user(request.user, pk)
    return control_from_page(
        request, job, cancel_mining, MiningStateError,
        done="Mining job cancelled.", page="lexical:mining_job",
    )  # fmt: skip
