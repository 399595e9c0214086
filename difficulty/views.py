"""Pages of the search app. Thin: parse the request, call one service or selector, render."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from core.http import HtmxHttpRequest
from difficulty import charts as difficulty_charts
from difficulty import selectors as difficulty
from difficulty.forms import (
    CampaignDatasetForm,
    DatasetUploadForm,
    EvaluateForm,
    campaign_dataset_options,
)
from difficulty.import_kinds import DATASET_KIND, dataset_options
from difficulty.services import (
    DatasetFormatError,
    DifficultyDatasetError,
    build_difficulty_dataset_from_campaign,
    cancel_difficulty_evaluation,
    import_difficulty_file,
    start_difficulty_evaluation,
)
from imports import ImportRefused
from imports import services as import_services

# --- Difficulty datasets and DEC evaluations (seed 002) --------------------------------------

# mt-metrics-eval's usual human-score names, suggested as the upload form's human score is typed
# (a release's own names are listed when the one given is not among them).
HUMAN_SCORE_NAMES = ("mqm", "wmt", "wmt-z", "wmt-raw", "wmt-appraise", "wmt-appraise-z", "esa")


@staff_member_required
@require_GET
def dataset_list(request: HttpRequest) -> HttpResponse:
    datasets = (
        difficulty.datasets_for_user(request.user)
        .select_related("created_by")
        .annotate(n_evaluations=Count("evaluations"))
    )
    return render(request, "difficulty/dataset_list.html", {"datasets": datasets})


@staff_member_required
@require_http_methods(["GET", "POST"])
def dataset_upload(request: HttpRequest) -> HttpResponse:
    form = DatasetUploadForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if import_services.runs_in_background(upload):
            return _import_in_background(request, form)
        try:
            dataset = import_difficulty_file(
                upload, **form.import_options(), created_by=request.user
            )
        except DatasetFormatError as exc:
            errors = exc.errors + (["(more errors not shown)"] if exc.truncated else [])
        except DifficultyDatasetError as exc:
            errors = [str(exc)]
        else:
            notes = "".join(f" Note: {line}." for line in dataset.import_report_lines())
            messages.success(
                request, f"Imported {dataset.name}: {dataset.n_segments} segments.{notes}"
            )
            return redirect("difficulty:dataset_detail", pk=dataset.pk)
    status = 400 if errors else 200
    return render(
        request,
        "difficulty/dataset_upload.html",
        {"form": form, "errors": errors, "human_score_names": HUMAN_SCORE_NAMES},
        status=status,
    )


def _import_in_background(request: HttpRequest, form: DatasetUploadForm) -> HttpResponse:
    """A big file: store it, queue its import, and show the job's progress page."""
    upload = form.cleaned_data["file"]
    options = dataset_options(**form.import_options())
    try:
        job = import_services.start_import(DATASET_KIND, upload, options, created_by=request.user)
    except ImportRefused as exc:
        context = {"form": form, "errors": exc.errors, "human_score_names": HUMAN_SCORE_NAMES}
        return render(request, "difficulty/dataset_upload.html", context, status=400)
    messages.info(request, f"{upload.name} is being imported by a worker.")
    return redirect("imports:job_detail", pk=job.pk)


@staff_member_required
@require_http_methods(["GET", "POST"])
def dataset_from_campaign(request: HttpRequest) -> HttpResponse:
    campaigns = difficulty.source_campaigns()
    form = CampaignDatasetForm(request.POST or None, campaigns=campaigns)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            options = campaign_dataset_options(form.cleaned_data, form.reference_rule())
            dataset = build_difficulty_dataset_from_campaign(**options, created_by=request.user)
        except DifficultyDatasetError as exc:
            errors = [str(exc)]
        else:
            messages.success(request, f"Built {dataset.name}: {dataset.n_segments} segments.")
            return redirect("difficulty:dataset_detail", pk=dataset.pk)
    return render(
        request,
        "difficulty/dataset_from_campaign.html",
        {"form": form, "errors": errors, "has_campaigns": campaigns.exists()},
        status=400 if errors else 200,
    )


def _detail_context(request: HttpRequest, dataset, form: EvaluateForm | None = None) -> dict:
    options = difficulty.estimator_options(dataset)
    return {
        "dataset": dataset,
        "overview": difficulty.dataset_overview(dataset),
        "form": form or EvaluateForm(options=options),
        "evaluations": dataset.evaluations.all()[:20],
        "comparison": difficulty.comparison_rows(dataset),
    }


@staff_member_required
@require_GET
def dataset_detail(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = difficulty.dataset_for_user(request.user, pk)
    return render(request, "difficulty/dataset_detail.html", _detail_context(request, dataset))


@staff_member_required
@require_GET
def dataset_segments(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    dataset = difficulty.dataset_for_user(request.user, pk)
    code = request.GET.get("lp") or None
    page = Paginator(difficulty.segments_page(dataset, code), 25).get_page(request.GET.get("page"))
    template = "difficulty/dataset_segments.html"
    if request.htmx:
        template += "#segments"
    return render(
        request,
        template,
        {
            "dataset": dataset,
            "page": page,
            "lp": code or "",
            "codes": dataset.language_pairs.order_by("code").values_list("code", flat=True),
        },
    )


@staff_member_required
@require_GET
def dataset_download(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    """The dataset as the JSONL its import reads (streamed)."""
    dataset = difficulty.dataset_for_user(request.user, pk)
    response = StreamingHttpResponse(
        difficulty.dataset_jsonl(dataset), content_type="application/jsonl; charset=utf-8"
    )
    filename = difficulty.dataset_file_name(dataset)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "no-store"
    return response


@staff_member_required
@require_GET
def dataset_scores_plot(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = difficulty.dataset_for_user(request.user, pk)
    matrices = [
        (lp.code, difficulty.human_scores(lp, include_references=False)[0])
        for lp in dataset.language_pairs.defer("judgments")
        .prefetch_related("systems")
        .order_by("code")
    ]
    svg = difficulty_charts.score_distribution_svg(matrices, perfect=dataset.perfect_score)
    return HttpResponse(svg, content_type="image/svg+xml")


@staff_member_required
@require_POST
def dataset_evaluate(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = difficulty.dataset_for_user(request.user, pk)
    form = EvaluateForm(request.POST, options=difficulty.estimator_options(dataset))
    if form.is_valid():
        try:
            evaluation = start_difficulty_evaluation(
                dataset,
                form.cleaned_data["estimator_names"],
                subset_fraction=form.cleaned_data["subset_fraction"],
                seed=form.cleaned_data["seed"],
                n_bootstrap=form.cleaned_data["n_bootstrap"],
                include_references=form.cleaned_data["include_references"],
                created_by=request.user,
            )
        except DifficultyDatasetError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("difficulty:evaluation_detail", pk=evaluation.pk)
    return render(
        request,
        "difficulty/dataset_detail.html",
        _detail_context(request, dataset, form),
        status=400,
    )


@staff_member_required
@require_GET
def evaluation_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    evaluation = difficulty.evaluation_for_user(request.user, pk)
    if request.GET.get("format") == "json" and evaluation.results:
        response = JsonResponse(evaluation.results, json_dumps_params={"indent": 2})
        response["Content-Disposition"] = f'attachment; filename="dec-evaluation-{pk}.json"'
        return response
    context: dict[str, Any] = {"evaluation": evaluation, "dataset": evaluation.dataset}
    if evaluation.status == evaluation.Status.DONE:
        context["tables"] = difficulty.evaluation_tables(evaluation)
        context["cost"] = difficulty.evaluation_cost(evaluation)
    if request.htmx:
        html = render_to_string(
            "difficulty/evaluation_detail.html#status", context, request=request
        )
        # A finished evaluation answers 286 so htmx stops polling.
        return HttpResponseStopPolling(html) if evaluation.is_finished else HttpResponse(html)
    return render(request, "difficulty/evaluation_detail.html", context)


@staff_member_required
@require_GET
def evaluation_plot(request: HttpRequest, pk: int) -> HttpResponse:
    evaluation = difficulty.evaluation_for_user(request.user, pk)
    if not evaluation.results:
        return HttpResponse("This evaluation has no results yet.", status=404)
    return HttpResponse(
        difficulty_charts.evaluation_chart_svg(evaluation.results), content_type="image/svg+xml"
    )


@staff_member_required
@require_POST
def evaluation_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    evaluation = difficulty.evaluation_for_user(request.user, pk)
    if cancel_difficulty_evaluation(evaluation):
        messages.success(request, "Evaluation cancelled.")
    return redirect("difficulty:evaluation_detail", pk=evaluation.pk)
