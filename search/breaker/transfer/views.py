"""Pages of transfers (seed 001 §3.3–3.5, Tables 3–5). Staff only; thin: parse, call one service,
render. The transfer page polls its status every 2 s like a run page and reloads the matrix
when the transfer moved."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core import job_pages
from core.http import HtmxHttpRequest
from search.breaker.services import RunStateError
from search.breaker.transfer.forms import TransferForm, context_runs
from search.breaker.transfer.selectors import (
    csv_response,
    jsonl_response,
    matrix,
    transfer_for_user,
    transfers_for_user,
)
from search.breaker.transfer.services import cancel_transfer, start_transfer

DETAIL = "search/breaker/transfer_detail.html"


@staff_member_required
@require_GET
def transfer_list(request: HttpRequest) -> HttpResponse:
    rows = transfers_for_user(request.user).prefetch_related("runs")
    return job_pages.job_list(request, "search/breaker/transfer_list.html", rows)


class TransferCreate(job_pages.JobFormView):
    """The runs offered are those of ``?run=`` or ``?comparison=``, when given."""

    template_name = "search/breaker/transfer_form.html"

    def get_form(self, data: Any = None, files: Any = None) -> TransferForm:
        runs = context_runs(self.request.GET.get("run"), self.request.GET.get("comparison"))
        return TransferForm(data, runs=runs)

    def context(self, form: TransferForm) -> dict:
        return {"form": form, "comparison": self.request.GET.get("comparison", "")}

    def start(self, form: TransferForm) -> HttpResponse:
        transfer = start_transfer(form.to_config(), created_by=self.request.user)
        message = f"Transfer #{transfer.pk} is queued."
        return job_pages.started(self.request, message, "search:breaker_transfer", transfer)


def _context(transfer) -> dict:
    version = job_pages.job_version(transfer)
    return {"transfer": transfer, "version": version, "matrix": matrix(transfer)}


@staff_member_required
@require_GET
def transfer_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    transfer = transfer_for_user(request.user, pk)
    return job_pages.job_page(
        request, DETAIL, transfer, _context, name="transfer", changed_event="transfer-changed"
    )


@staff_member_required
@require_GET
def transfer_matrix(request: HttpRequest, pk: int) -> HttpResponse:
    context = _context(transfer_for_user(request.user, pk))
    return render(request, f"{DETAIL}#matrix", context)


transfer_cancel = job_pages.cancel_view(
    transfer_for_user, cancel_transfer, RunStateError,
    done="Transfer cancelled.", page="search:breaker_transfer",
)  # fmt: skip


@staff_member_required
@require_GET
def transfer_csv(request: HttpRequest, pk: int) -> HttpResponse:
    return csv_response(transfer_for_user(request.user, pk))


@staff_member_required
@require_GET
def transfer_jsonl(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    return jsonl_response(transfer_for_user(request.user, pk))
