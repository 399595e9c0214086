"""Sign-up: a campaign's public link for new accounts, joining with an account, and Prolific
participants (who sign in by their PROLIFIC_PID and return the study when they cannot take part).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation import access, forms, signup_limits
from annotation.models import Annotator, Campaign, Enrollment
from annotation.refusals import Excluded, NotAllowed, RequirementNotMet, http_status
from annotation.services.enrollment import (
    find_prolific_annotator,
    invite_matches,
    join_campaign,
    prolific_sign_in,
    sign_up,
)
from annotation.views.notice import notice

# The backend a sign-up logs the new user in with (a path: annotation imports no accounts code).
_AUTH_BACKEND = "accounts.backends.ModelBackend"


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
    if campaign.invite_token and not invite_matches(campaign, token):
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
    form = _for_campaign(forms.SignUpForm(request.POST or None), campaign)
    if request.method == "POST" and not campaign.signup_closed and form.is_valid():
        data = form.cleaned_data
        try:
            user, _annotator, _enrollment = sign_up(
                campaign,
                username=data["username"],
                password=data["password"],
                email=data["email"],
                native_language=data["native_language"],
                working_languages=data["working_languages"],
                consent=data["consent"],
                invite_token=token,
            )
        except NotAllowed as exc:
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
    return _signup_page(request, campaign, form, token, "new")


def _signup_page(
    request: HttpRequest, campaign: Campaign, form, token: str, mode: str, **extra
) -> HttpResponse:
    """The sign-up page in one of its modes (new account, joining, Prolific): 403 while sign-up
    is closed, 422 after a POST that was refused."""
    closed = campaign.signup_closed
    context = {"campaign": campaign, "form": form, "token": token, "closed": closed, "mode": mode}
    status = 403 if closed else (422 if request.method == "POST" else 200)
    return render(request, "annotation/signup.html", context | extra, status=status)


def _too_many_signups(request: HttpRequest) -> HttpResponse:
    return notice(
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


def _refusal_on_form(form, exc: NotAllowed, extra: str = "") -> None:
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
    existing = find_prolific_annotator(pid)
    signed_in = request.user.is_authenticated
    if signed_in and (existing is None or existing.user_id != request.user.pk):
        # Never swap a signed-in session for another account: a link someone sent would
        # otherwise sign a staff member out of their own account and into a participant's.
        return _signed_in_as_someone_else(request, token, params)
    form = _for_campaign(forms.JoinForm(request.POST or None), campaign)
    if existing is not None or (request.method == "POST" and form.is_valid()):
        data = form.cleaned_data if existing is None else {}
        try:
            user, _annotator, _enrollment = prolific_sign_in(
                campaign,
                prolific_pid=pid,
                invite_token=token,
                native_language=data.get("native_language", ""),
                working_languages=data.get("working_languages", []),
                consent=bool(data.get("consent")),
                signed_in_as_participant=signed_in,
                **ids,
            )
        except RequirementNotMet as exc:
            if existing is not None:
                return notice(
                    request, "Cannot start", f"{exc}{_PROLIFIC_RETURN}", status=http_status(exc)
                )
            _refusal_on_form(form, exc, _PROLIFIC_RETURN)
        except Excluded as exc:
            return notice(
                request, "Cannot start", f"{exc}{_PROLIFIC_RETURN}", status=http_status(exc)
            )
        except NotAllowed as exc:
            return notice(request, "Cannot start", str(exc), status=http_status(exc))
        else:
            if not signed_in:
                login(request, user, backend=_AUTH_BACKEND)
            return redirect("annotation:annotate_next", campaign_id=campaign.pk)
    prolific = {"PROLIFIC_PID": pid, "STUDY_ID": ids["study_id"], "SESSION_ID": ids["session_id"]}
    return _signup_page(request, campaign, form, token, "prolific", prolific=prolific)


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
            join_campaign(
                request.user,
                campaign,
                native_language=data.get("native_language") or "",
                working_languages=data.get("working_languages") or [],
                consent=bool(data.get("consent")) or annotator is not None,
                invite_token=token,
            )
        except NotAllowed as exc:
            _refusal_on_form(form, exc)
        else:
            return redirect("annotation:annotate_next", campaign_id=campaign.pk)
    mode = "join" if annotator is None else "join_existing"
    return _signup_page(request, campaign, form, token, mode)


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
