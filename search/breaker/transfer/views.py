"""Pages of transfers (seed 001 §3.3–3.5, Tables 3–5). Staff only; thin: parse, call one service,
render. The transfer page polls its status every 2 s like a run page and reloads the matrix
when the transfer moved."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.http import HtmxHttpRequest
from core.job_pages import control_from_page, job_page, job_version
from search.breaker.config import BreakerConfigError
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
    page = Paginator(rows, 50).get_page(request.GET.get("page"))
    return render(request, "search/breaker/transfer_list.html", {"page": page})


@staff_member_required
@require_http_methods(["GET", "POST"])
def transfer_create(request: HttpRequest) -> HttpResponse:
    runs = context_runs(request.GET.get("run"), request.GET.get("comparison"))
    context: dict[str, object] = {"comparison": request.GET.get("comparison", "")}
    if request.method == "GET":
        context["form"] = TransferForm(runs=runs)
        return render(request, "search/breaker/transfer_form.html", context)
    form = TransferForm(request.POST, runs=runs)
    if form.is_valid():
        try:
            transfer = start_transfer(form.to_config(), created_by=request.user)
        except BreakerConfigError as exc:
            form.add_config_errors(exc.errors)
        else:
            messages.success(request, f"Transfer #{transfer.pk} is queued.")
            return redirect("search:breaker_transfer", pk=transfer.pk)
    context["form"] = form
    return render(request, "search/breaker/transfer_form.html", context, status=400)


def _context(transfer) -> dict:
    return {"transfer": transfer, "version": job_version(transfer), "matrix": matrix(transfer)}


@staff_member_required
@require_GET
def transfer_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    transfer = transfer_for_user(request.user, pk)
    return job_page(
        request, DETAIL, transfer, _context, name="transfer", changed_event="transfer-changed"
    )


@staff_member_required
@require_GET
def transfer_matrix(request: HttpRequest, pk: int) -> HttpResponse:
    context = _context(transfer_for_user(request.user, pk))
    return render(request, f"{DETAIL}#matrix", context)


@staff_member_required
@require_POST
def transfer_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    transfer = transfer_for_user(request.user, pk)
    return control_from_page(
        request, transfer, cancel_transfer, RunStateError,
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
