"""Organisers' pages: campaigns (create, import, settings, items, attention checks) and
annotators (enrollment actions). Staff only: others get 403, anonymous users the login page."""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlencode

import numpy as np
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation import access, formats, forms, qc, selectors
from annotation.import_kinds import CAMPAIGN_KIND, campaign_options
from annotation.models import Annotator, Enrollment
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import generate_attention_checks, import_campaign, import_items
from annotation.services.enrollment import (
    reset_annotator_work,
    set_enrollment_status,
    set_qualified,
)
from core.http import HtmxHttpRequest
from imports import ImportRefused
from imports import services as import_services


def staff_required(view):
    """Anonymous users go to the login page; logged-in non-staff get 403 and nothing runs."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Staff only")
        return view(request, *args, **kwargs)

    return wrapper


@staff_required
def campaigns(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/campaigns.html", {"campaigns": selectors.campaign_rows()})


def _import_error_context(exc: CampaignImportError) -> list[str]:
    return [f"{exc.unit} {number}: {reason}" for number, reason in exc.errors]


@staff_required
@require_http_methods(["GET", "POST"])
def campaign_create(request: HttpRequest) -> HttpResponse:
    form = forms.CampaignCreateForm(request.POST or None, request.FILES or None)
    import_errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        settings = {
            name: value
            for name, value in form.cleaned_data.items()
            if name in forms.CampaignCreateForm.Meta.fields and name not in ("name", "protocol")
        }
        settings["mqm_weights"] = form.instance.mqm_weights
        upload = form.cleaned_data["items_file"]
        file_format = form.cleaned_data["file_format"] or "auto"
        try:
            if import_services.runs_in_background(upload):
                options = campaign_options(
                    name=form.cleaned_data["name"], protocol=form.cleaned_data["protocol"],
                    file_format=file_format, settings=settings, file_name=upload.name,
                )  # fmt: skip
                job = import_services.start_import(
                    CAMPAIGN_KIND, upload, options, created_by=request.user
                )
                messages.info(request, f"{upload.name} is being imported by a worker.")
                return redirect("imports:job_detail", pk=job.pk)
            campaign = import_campaign(
                upload,
                name=form.cleaned_data["name"],
                protocol=form.cleaned_data["protocol"],
                file_format=file_format,
                created_by=request.user,
                **settings,
            )
        except ImportRefused as exc:
            import_errors = exc.errors
        except CampaignImportError as exc:
            import_errors = _import_error_context(exc)
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error(None, message)
        else:
            messages.success(
                request,
                f"Imported {selectors.describe_item_counts(campaign)} into {campaign.name}.",
            )
            return redirect("annotation:campaign_detail", campaign_id=campaign.pk)
    status = 422 if request.method == "POST" else 200
    return render(
        request,
        "annotation/campaign_form.html",
        {
            "form": form,
            "import_errors": import_errors,
            "creating": True,
            "file_formats": formats.documented(),
        },
        status=status,
    )


@staff_required
def campaign_detail(request: HtmxHttpRequest, campaign_id: int) -> HttpResponse:
    campaign = access.campaign_for_admin(request.user, campaign_id)
    rows = selectors.enrollment_rows(campaign)
    summaries = qc.summaries_for_campaign(campaign)
    for row in rows:
        row["qc"] = summaries.get(row["enrollment"].annotator_id)
    signup_path = reverse("annotation:signup", args=[campaign.slug])
    query = {"invite": campaign.invite_token} if campaign.invite_token else {}
    signup_url = request.build_absolute_uri(signup_path + ("?" + urlencode(query) if query else ""))
    prolific_query = dict(query) | {
        "PROLIFIC_PID": "{{%PROLIFIC_PID%}}",
        "STUDY_ID": "{{%STUDY_ID%}}",
        "SESSION_ID": "{{%SESSION_ID%}}",
    }
    prolific_url = (
        request.build_absolute_uri(signup_path)
        + "?"
        + "&".join(f"{k}={v}" for k, v in prolific_query.items())
    )
    context = {
        "campaign": campaign,
        "rows": rows,
        "progress": selectors.campaign_progress(campaign),
        "kinds": selectors.item_kind_counts(campaign),
        "exclusive_with": selectors.exclusive_with(campaign),
        "signup_url": signup_url,
        "prolific_url": prolific_url,
        "upload_form": forms.ItemsUploadForm(),
        "item_file_formats": [formats.FORMATS["jsonl"]],
        "checks_form": forms.GenerateChecksForm(),
        "weights": campaign.weights(),
    }
    template = "annotation/campaign_detail.html"
    if request.htmx:
        template += "#annotators"
    return render(request, template, context)


@staff_required
@require_http_methods(["GET", "POST"])
def campaign_settings(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = access.campaign_for_admin(request.user, campaign_id)
    form = forms.CampaignForm(request.POST or None, instance=campaign)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Settings saved.")
        return redirect("annotation:campaign_detail", campaign_id=campaign.pk)
    status = 422 if request.method == "POST" else 200
    return render(
        request,
        "annotation/campaign_form.html",
        {"form": form, "campaign": campaign, "creating": False},
        status=status,
    )


@staff_required
@require_POST
def campaign_import_items(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = access.campaign_for_admin(request.user, campaign_id)
    form = forms.ItemsUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a JSONL file to upload.")
        return redirect("annotation:campaign_detail", campaign_id=campaign.pk)
    try:
        created = import_items(campaign, form.cleaned_data["items_file"])
    except CampaignImportError as exc:
        for line in _import_error_context(exc):
            messages.error(request, f"Nothing imported — {line}")
    else:
        messages.success(request, f"Added {len(created)} items.")
    return redirect("annotation:campaign_detail", campaign_id=campaign.pk)


@staff_required
@require_POST
def campaign_generate_checks(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = access.campaign_for_admin(request.user, campaign_id)
    form = forms.GenerateChecksForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give a number of checks between 1 and 500.")
        return redirect("annotation:campaign_detail", campaign_id=campaign.pk)
    seed = form.cleaned_data["seed"]
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    try:
        created = generate_attention_checks(
            campaign, form.cleaned_data["count"], np.random.default_rng(seed)
        )
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Generated {len(created)} attention checks (seed {seed}).")
    return redirect("annotation:campaign_detail", campaign_id=campaign.pk)


_ENROLLMENT_ACTIONS = {
    "approve": Enrollment.Status.APPROVED,
    "resume": Enrollment.Status.APPROVED,
    "pause": Enrollment.Status.PAUSED,
    "reject": Enrollment.Status.REJECTED,
}


@staff_required
@require_POST
def enrollment_action(request: HttpRequest, enrollment_id: int, action: str) -> HttpResponse:
    enrollment = access.enrollment_for_admin(request.user, enrollment_id)
    name = enrollment.annotator.pseudonym
    if action in _ENROLLMENT_ACTIONS:
        set_enrollment_status(enrollment, _ENROLLMENT_ACTIONS[action])
        messages.success(request, f"{name}: {enrollment.get_status_display().lower()}.")
    elif action == "qualify":
        set_qualified(enrollment, True)
        messages.success(request, f"{name}: marked as qualified.")
    elif action == "reset":
        result = reset_annotator_work(enrollment)
        messages.success(
            request,
            f"{name}: removed {result.annotations} annotations and {result.assignments} claims "
            "in this campaign; nobody else's work changed.",
        )
    else:
        raise Http404("Unknown action")
    back = request.POST.get("next") or ""
    if back == "annotators":
        return redirect("annotation:annotators")
    return redirect("annotation:campaign_detail", campaign_id=enrollment.campaign_id)


@staff_required
def annotators(request: HttpRequest) -> HttpResponse:
    annotator_list = (
        Annotator.objects.select_related("user")
        .prefetch_related("enrollments__campaign")
        .order_by("-created_at")
    )
    return render(request, "annotation/annotators.html", {"annotators": annotator_list})
