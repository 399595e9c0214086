"""Pages of the annotation app: thin adapters over services, selectors and access checks."""

from __future__ import annotations

import uuid
from functools import wraps
from urllib.parse import urlencode

import numpy as np
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    JsonResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation import (
    access,
    formats,
    forms,
    html_text,
    qc,
    scoring,
    selectors,
    services,
    signup_limits,
)
from annotation.import_kinds import CAMPAIGN_KIND, campaign_options
from annotation.models import Annotation, Annotator, Campaign, Enrollment, Item
from annotation.protocols import ESA_LOW_SCORE
from core.http import HtmxHttpRequest
from formats import strict_json
from imports import ImportRefused
from imports import services as import_services

# The backend a sign-up logs the new user in with (a path: annotation imports no accounts code).
_AUTH_BACKEND = "accounts.backends.ModelBackend"


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


def login_required_json(view):
    """For fetch() endpoints: 401 JSON instead of a redirect, so the page can tell the user."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        if not request.user.is_authenticated:
            return JsonResponse(
                {"ok": False, "error": "session_expired", "login_url": reverse("login")},
                status=401,
            )
        return view(request, *args, **kwargs)

    return wrapper


def _notice(request, title: str, text: str, status: int = 200, link=None) -> HttpResponse:
    return render(
        request,
        "annotation/notice.html",
        {"title": title, "text": text, "link": link},
        status=status,
    )


# --- admin: campaigns -----------------------------------------------------------------------


@staff_required
def campaigns(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/campaigns.html", {"campaigns": selectors.campaign_rows()})


def _import_error_context(exc: services.CampaignImportError) -> list[str]:
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
            campaign = services.import_campaign(
                upload,
                name=form.cleaned_data["name"],
                protocol=form.cleaned_data["protocol"],
                file_format=file_format,
                created_by=request.user,
                **settings,
            )
        except ImportRefused as exc:
            import_errors = exc.errors
        except services.CampaignImportError as exc:
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
        created = services.import_items(campaign, form.cleaned_data["items_file"])
    except services.CampaignImportError as exc:
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
        created = services.generate_attention_checks(
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
        services.set_enrollment_status(enrollment, _ENROLLMENT_ACTIONS[action])
        messages.success(request, f"{name}: {enrollment.get_status_display().lower()}.")
    elif action == "qualify":
        services.set_qualified(enrollment, True)
        messages.success(request, f"{name}: marked as qualified.")
    elif action == "reset":
        result = services.reset_annotator_work(enrollment)
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


# --- sign-up --------------------------------------------------------------------------------


def _signup_campaign(request: HttpRequest, slug: str) -> tuple[Campaign, str]:
    campaign = get_object_or_404(Campaign, slug=slug)
    # ``token`` is the parameter's old name, still in links handed out before.
    token = next(
        (
            value
            for name in ("invite", "token")
            for value in (request.GET.get(name), request.POST.get(name))
            if value
        ),
        "",
    )
    if campaign.invite_token and not services.invite_matches(campaign, token):
        raise Http404("No such campaign")
    return campaign, token


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest, slug: str) -> HttpResponse:
    """A campaign's public sign-up link; also the entry point of Prolific participants."""
    campaign, token = _signup_campaign(request, slug)
    address = request.META.get("REMOTE_ADDR", "")
    if request.method == "POST" and not signup_limits.record_signup_attempt(address, campaign.pk):
        return _too_many_signups(request)
    params = request.POST if request.method == "POST" else request.GET
    pid = (params.get("PROLIFIC_PID") or "").strip()
    if pid:
        return _prolific_signup(request, campaign, token, params)
    if request.user.is_authenticated:
        return _join_signup(request, campaign, token)
    if request.method == "POST" and signup_limits.taken_names_used_up(address):
        return _too_many_signups(request)
    closed = campaign.signup_closed
    form = _for_campaign(forms.SignUpForm(request.POST or None), campaign)
    if request.method == "POST" and not closed and form.is_valid():
        data = form.cleaned_data
        try:
            user, _annotator, _enrollment = services.sign_up(
                campaign,
                username=data["username"],
                password=data["password"],
                email=data["email"],
                native_language=data["native_language"],
                working_languages=data["working_languages"],
                consent=data["consent"],
                invite_token=token,
            )
        except services.NotAllowed as exc:
            _refusal_on_form(form, exc)
        else:
            login(request, user, backend=_AUTH_BACKEND)
            return redirect("annotation:annotate_next", campaign_id=campaign.pk)
    # "That name is taken" tells whoever asks that the account exists; a person choosing a
    # name needs it, a script checking a list of names gets a few an hour (signup_limits).
    if form.has_error("username", code=forms.NAME_TAKEN) and not signup_limits.record_taken_name(
        address
    ):
        return _too_many_signups(request)
    return render(
        request,
        "annotation/signup.html",
        {"campaign": campaign, "form": form, "token": token, "closed": closed, "mode": "new"},
        status=403 if closed else (422 if request.method == "POST" else 200),
    )


def _too_many_signups(request: HttpRequest) -> HttpResponse:
    return _notice(
        request,
        "Too many sign-ups",
        "Too many sign-ups from your address; try again in an hour.",
        status=429,
    )


def _for_campaign(form, campaign: Campaign):
    """The sign-up form, its language hints asking for codes where the campaign requires
    languages (a name such as "German" is fine otherwise)."""
    if campaign.has_language_requirement:
        forms.ask_for_codes(form)
    return form


def _refusal_on_form(form, exc: services.NotAllowed, extra: str = "") -> None:
    """A refusal next to the field it is about (the declared native language, ...)."""
    field = getattr(exc, "field", None)
    error = ValidationError(f"{exc}{extra}", code=getattr(exc, "code", None))
    form.add_error(field if field in form.fields else None, error)


# Prolific participants who are not eligible must return the study (not submit it), so that
# their place goes to someone else and they are not rejected.
_PROLIFIC_RETURN = " You cannot take part in this study: please return it on Prolific."
_PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


def _prolific_signup(request: HttpRequest, campaign: Campaign, token: str, params) -> HttpResponse:
    pid = params.get("PROLIFIC_PID", "").strip()
    ids = {"study_id": params.get("STUDY_ID", ""), "session_id": params.get("SESSION_ID", "")}
    existing = services.find_prolific_annotator(pid)
    signed_in = request.user.is_authenticated
    if signed_in and (existing is None or existing.user_id != request.user.pk):
        # Never swap a signed-in session for another account: a link someone sent would
        # otherwise sign a staff member out of their own account and into a participant's.
        return _signed_in_as_someone_else(request, token, params)
    form = _for_campaign(forms.JoinForm(request.POST or None), campaign)
    if existing is not None or (request.method == "POST" and form.is_valid()):
        data = form.cleaned_data if existing is None else {}
        try:
            user, _annotator, _enrollment = services.prolific_sign_in(
                campaign,
                prolific_pid=pid,
                invite_token=token,
                native_language=data.get("native_language", ""),
                working_languages=data.get("working_languages", []),
                consent=bool(data.get("consent")),
                signed_in_as_participant=signed_in,
                **ids,
            )
        except services.RequirementNotMet as exc:
            if existing is not None:
                return _notice(request, "Cannot start", f"{exc}{_PROLIFIC_RETURN}", status=403)
            _refusal_on_form(form, exc, _PROLIFIC_RETURN)
        except services.Excluded as exc:
            return _notice(request, "Cannot start", f"{exc}{_PROLIFIC_RETURN}", status=403)
        except services.NotAllowed as exc:
            return _notice(request, "Cannot start", str(exc), status=403)
        else:
            if not signed_in:
                login(request, user, backend=_AUTH_BACKEND)
            return redirect("annotation:annotate_next", campaign_id=campaign.pk)
    closed = campaign.signup_closed
    return render(
        request,
        "annotation/signup.html",
        {
            "campaign": campaign,
            "form": form,
            "token": token,
            "closed": closed,
            "mode": "prolific",
            "prolific": {
                "PROLIFIC_PID": pid,
                "STUDY_ID": ids["study_id"],
                "SESSION_ID": ids["session_id"],
            },
        },
        status=403 if closed else (422 if request.method == "POST" else 200),
    )


def _signed_in_as_someone_else(request: HttpRequest, token: str, params) -> HttpResponse:
    """The Prolific link of another participant, opened while signed in: nothing changes, and
    the page offers to sign out and come back to the same link."""
    query = {name: params[name] for name in _PROLIFIC_PARAMS if params.get(name)}
    if token:
        query["invite"] = token
    return render(
        request,
        "annotation/notice.html",
        {
            "title": "You are signed in",
            "text": f"You are signed in as {request.user.get_username()}. To take part as this "
            "Prolific participant, sign out first.",
            "signout_next": f"{request.path}?{urlencode(query)}",
        },
        status=409,
    )


def _join_signup(request: HttpRequest, campaign: Campaign, token: str) -> HttpResponse:
    annotator = access.annotator_for_user(request.user)
    if (
        annotator is not None
        and Enrollment.objects.filter(campaign=campaign, annotator=annotator).exists()
    ):
        return redirect("annotation:annotate_next", campaign_id=campaign.pk)
    form = _for_campaign(_join_form(request, campaign, annotator), campaign)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            services.join_campaign(
                request.user,
                campaign,
                native_language=data.get("native_language") or "",
                working_languages=data.get("working_languages") or [],
                consent=bool(data.get("consent")) or annotator is not None,
                invite_token=token,
            )
        except services.NotAllowed as exc:
            _refusal_on_form(form, exc)
        else:
            return redirect("annotation:annotate_next", campaign_id=campaign.pk)
    closed = campaign.signup_closed
    return render(
        request,
        "annotation/signup.html",
        {
            "campaign": campaign,
            "form": form,
            "token": token,
            "closed": closed,
            "mode": "join" if annotator is None else "join_existing",
        },
        status=403 if closed else (422 if request.method == "POST" else 200),
    )


def _join_form(request: HttpRequest, campaign: Campaign, annotator: Annotator | None):
    """The form a logged-in user fills to join: the whole profile without one; with one, only
    the languages (prefilled from the profile) where the campaign requires languages, else
    nothing but the button."""
    data = request.POST if request.method == "POST" else None
    if annotator is None:
        return forms.JoinForm(data)
    if not campaign.has_language_requirement:
        return forms.JoinConfirmForm(data)
    initial = {
        "native_language": annotator.native_language,
        "working_languages": ", ".join(annotator.working_languages),
    }
    return forms.LanguageFields(data, initial=initial)


# --- annotators -----------------------------------------------------------------------------


@login_required
def my_tasks(request: HttpRequest) -> HttpResponse:
    annotator = access.annotator_for_user(request.user)
    rows = selectors.task_rows(annotator) if annotator else []
    return render(request, "annotation/my_tasks.html", {"rows": rows, "annotator": annotator})


@login_required
def annotate_next(request: HttpRequest, campaign_id: int) -> HttpResponse:
    enrollment = access.enrollment_for_annotator(request.user, campaign_id)
    try:
        item = services.next_item_for(enrollment.annotator, enrollment.campaign)
    except services.NotAllowed as exc:
        return _notice(
            request, enrollment.campaign.name, str(exc), status=403,
            link=(reverse("annotation:my_tasks"), "Back to my tasks"),
        )  # fmt: skip
    if item is None:
        enrollment.refresh_from_db(fields=["finished_at"])
        if enrollment.finished_at is None:
            return _notice(
                request, enrollment.campaign.name,
                "Every remaining item is being annotated by someone else right now. "
                "Please come back in a few minutes.",
                link=(reverse("annotation:annotate_next", args=[campaign_id]), "Try again"),
            )  # fmt: skip
        return redirect("annotation:finish", campaign_id=campaign_id)
    return redirect("annotation:annotate", item_id=item.pk)


def _answer_from_post(campaign: Campaign, post) -> dict:
    """The answer of a submission: the JSON the page builds, or the plain form fields."""
    raw = post.get("answer")
    if raw:
        try:
            answer = strict_json.loads(raw)
        except strict_json.JSONInputError:
            return {"__invalid__": True}
        return answer if isinstance(answer, dict) else {"__invalid__": True}
    return campaign.get_protocol().answer_from_form(post)


def _target_html(item: Item, annotation: Annotation) -> str | None:
    """The target's sanitised HTML in an ``html`` campaign with the answer's (or draft's) target
    spans drawn in, so the page shows them before its script runs; None for plain text."""
    sanitized = item.target_html
    if sanitized is None:
        return None
    answer = annotation.draft or {}
    spans = answer.get("spans") if isinstance(answer, dict) else None
    marks = [
        (s["start"], s["end"], f"err-{s.get('severity') or 'minor'}")
        for s in (spans if isinstance(spans, list) else [])
        if isinstance(s, dict) and not s.get("missing") and s.get("side", "target") == "target"
    ]
    try:
        return html_text.highlight(sanitized, marks)
    except (TypeError, ValueError):  # a draft is not validated: show it without marks
        return sanitized


def _item_context(request, item: Item, annotation: Annotation, annotator: Annotator) -> dict:
    campaign = item.campaign
    protocol = campaign.get_protocol()
    # Choice items are independent questions: other items of a "document" are no context.
    before, after = selectors.document_context(item) if protocol.uses_document_context else ([], [])
    for segment in (*before, *after):
        segment.campaign = campaign  # their HTML depends on the campaign's text format
    previous_id, next_id = selectors.neighbours_in_history(annotator, item)
    history = selectors.my_history(annotator, campaign)
    payload = {
        "protocol": campaign.protocol,
        "target": item.target,
        "draft": annotation.draft,
        "submitted": annotation.is_submitted,
        "readonly": not campaign.is_open,
        "severities": campaign.severities(),
        "typology": scoring.typology_choices(),
        "features": list(protocol.page_features),
        "nonScorable": protocol.allows_non_scorable,
        "multiSelect": campaign.multi_select,
        "askConfidence": campaign.ask_confidence,
        "lowScore": ESA_LOW_SCORE,
        "draftUrl": reverse("annotation:save_draft", args=[item.pk]),
        "heartbeatUrl": reverse("annotation:heartbeat", args=[item.pk]),
        "submitUrl": reverse("annotation:submit", args=[item.pk]),
        "previousUrl": reverse("annotation:annotate", args=[previous_id]) if previous_id else "",
        "nextUrl": reverse("annotation:annotate", args=[next_id]) if next_id else "",
        "itemId": item.pk,
        "draftSavedAt": int(annotation.updated_at.timestamp() * 1000),
    }
    return {
        "campaign": campaign,
        "protocol": protocol,
        "item": item,
        "annotation": annotation,
        "before": before,
        "after": after,
        "payload": payload,
        "position": history.index(item.pk) + 1 if item.pk in history else None,
        "quota": campaign.max_items_per_annotator or selectors.campaign_item_count(campaign),
        "idempotency_key": uuid.uuid4().hex,
        "previous_id": previous_id,
        "next_id": next_id,
        "severities": campaign.severities(),
        "is_tutorial": item.kind == Item.Kind.TUTORIAL,
        "target_html": _target_html(item, annotation),
        **protocol.page_context(campaign, item, annotation),
    }


@login_required
def annotate(request: HttpRequest, item_id: int) -> HttpResponse:
    item, assignment = access.item_for_annotator(request.user, item_id)
    annotator = assignment.annotator
    annotation = services.start_viewing(annotator, item)
    return render(
        request, "annotation/annotate.html", _item_context(request, item, annotation, annotator)
    )


def _json_body(request: HttpRequest) -> dict | None:
    try:
        body = strict_json.loads(request.body or b"{}")
    except strict_json.JSONInputError:
        return None
    return body if isinstance(body, dict) else None


@login_required_json
@require_POST
def save_draft(request: HttpRequest, item_id: int) -> JsonResponse:
    item, assignment = access.item_for_annotator(request.user, item_id)
    annotator = assignment.annotator
    body = _json_body(request)
    if body is None:
        return JsonResponse({"ok": False, "errors": ["the body must be a JSON object"]}, status=400)
    try:
        annotation, missing = services.save_draft(annotator, item, body.get("draft", {}))
    except services.AnswerInvalid as exc:
        return JsonResponse({"ok": False, "errors": exc.errors}, status=422)
    except services.NotAllowed as exc:
        code = 403 if isinstance(exc, services.EnrollmentBlocked) else 409
        return JsonResponse({"ok": False, "errors": [str(exc)]}, status=code)
    return JsonResponse(
        {
            "ok": True,
            "missing": missing,
            "savedAt": int(annotation.updated_at.timestamp() * 1000),
        }
    )


@login_required_json
@require_POST
def heartbeat(request: HttpRequest, item_id: int) -> JsonResponse:
    item, assignment = access.item_for_annotator(request.user, item_id)
    annotation = services.record_activity(assignment.annotator, item)
    return JsonResponse({"ok": True, "timeSpent": annotation.time_spent_seconds})


def _tutorial_feedback(request: HttpRequest, annotation: Annotation) -> None:
    result = qc.check_result(annotation)
    explanation = (annotation.item.expected or {}).get("explanation", "")
    if result is True:
        messages.success(request, f"Tutorial: well done. {explanation}".strip())
    elif result is False:
        messages.warning(request, f"Tutorial: not what we expected. {explanation}".strip())


# Who may not work gets 403; a slot someone else filled is a conflict; the rest is bad input.
_SUBMIT_REFUSAL_STATUS: dict[type[Exception], int] = {
    services.EnrollmentBlocked: 403,
    services.ItemFull: 409,
}


@require_POST
def submit(request: HttpRequest, item_id: int) -> HttpResponse:
    wants_json = "application/json" in request.headers.get("Accept", "")
    if not request.user.is_authenticated:
        if wants_json:
            return login_required_json(lambda r: None)(request)
        return redirect_to_login(reverse("annotation:annotate", args=[item_id]))
    item, assignment = access.item_for_annotator(request.user, item_id)
    annotator = assignment.annotator
    campaign = item.campaign
    answer = _answer_from_post(campaign, request.POST)
    key = request.headers.get("Idempotency-Key") or request.POST.get("idempotency_key", "")
    try:
        result = services.submit_annotation(annotator, item, answer, idempotency_key=key)
    except (services.AnswerInvalid, services.NotAllowed) as exc:
        errors = exc.errors if isinstance(exc, services.AnswerInvalid) else [str(exc)]
        missing = exc.missing if isinstance(exc, services.AnswerInvalid) else []
        code = _SUBMIT_REFUSAL_STATUS.get(type(exc), 422)
        if wants_json:
            return JsonResponse({"ok": False, "errors": errors, "missing": missing}, status=code)
        annotation = Annotation.objects.get(item=item, annotator=annotator)
        context = _item_context(request, item, annotation, annotator)
        context["submit_errors"] = errors + missing
        return render(request, "annotation/annotate.html", context, status=code)
    if item.kind == Item.Kind.TUTORIAL and not result.replayed:
        _tutorial_feedback(request, result.annotation)
    next_url = reverse("annotation:annotate_next", args=[campaign.pk])
    if wants_json:
        return JsonResponse(
            {
                "ok": True,
                "annotation": result.annotation.pk,
                "created": result.created,
                "replayed": result.replayed,
                "next_url": next_url,
            }
        )
    return HttpResponseRedirect(next_url, status=303)


@login_required
def my_annotations(request: HttpRequest, campaign_id: int) -> HttpResponse:
    enrollment = access.enrollment_for_annotator(request.user, campaign_id)
    annotations = (
        Annotation.objects.filter(campaign=enrollment.campaign, annotator=enrollment.annotator)
        .select_related("item")
        .order_by("-updated_at")
    )
    return render(
        request,
        "annotation/my_annotations.html",
        {"campaign": enrollment.campaign, "annotations": annotations},
    )


@login_required
def finish(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The end of an annotator's work: Prolific participants go back with their code."""
    enrollment = access.enrollment_for_annotator(request.user, campaign_id)
    campaign, annotator = enrollment.campaign, enrollment.annotator
    if enrollment.finished_at is None:
        return redirect("annotation:annotate_next", campaign_id=campaign.pk)
    # The verdict the dashboard shows for this enrollment (finished, so time rules apply).
    verdict = qc.verdict_for(enrollment)
    code = campaign.prolific_pass_code if verdict == qc.PASS else campaign.prolific_fail_code
    if annotator.source == Annotator.Source.PROLIFIC and code and campaign.prolific_completion_url:
        separator = "&" if "?" in campaign.prolific_completion_url else "?"
        return HttpResponseRedirect(
            f"{campaign.prolific_completion_url}{separator}{urlencode({'cc': code})}"
        )
    submitted = Annotation.objects.filter(
        campaign=campaign, annotator=annotator, status=Annotation.Status.SUBMITTED
    ).count()
    return render(
        request,
        "annotation/finish.html",
        {"campaign": campaign, "submitted": submitted, "enrollment": enrollment},
    )
