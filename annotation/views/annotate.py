"""Annotators' pages: their tasks, the next item, the annotation page with its autosave,
heartbeat and submission endpoints, their annotations and the end of their work.

A refused draft or submission answers the status of ``annotation.refusals`` (as the API does).
"""

from __future__ import annotations

import uuid
from functools import wraps
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation import access, html_text, item_refs, qc, refusals, scoring, selectors
from annotation.models import Annotation, Annotator, Campaign, Item
from annotation.protocols import ESA_LOW_SCORE
from annotation.services import claims, submissions
from annotation.views.notice import notice
from formats import strict_json


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


@login_required
def my_tasks(request: HttpRequest) -> HttpResponse:
    annotator = access.annotator_for_user(request.user)
    rows = selectors.task_rows(annotator) if annotator else []
    return render(request, "annotation/my_tasks.html", {"rows": rows, "annotator": annotator})


@login_required
def annotate_next(request: HttpRequest, campaign_id: int) -> HttpResponse:
    enrollment = access.enrollment_for_annotator(request.user, campaign_id)
    try:
        item = claims.next_item_for(enrollment.annotator, enrollment.campaign)
    except refusals.NotAllowed as exc:
        return notice(
            request, enrollment.campaign.name, str(exc), status=refusals.http_status(exc),
            link=(reverse("annotation:my_tasks"), "Back to my tasks"),
        )  # fmt: skip
    if item is None:
        enrollment.refresh_from_db(fields=["finished_at"])
        if enrollment.finished_at is None:
            return notice(
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
        "itemId": item_refs.item_ref(item.pk),
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
        **_place(item, annotator),
        "idempotency_key": uuid.uuid4().hex,
        "previous_id": previous_id,
        "next_id": next_id,
        "severities": campaign.severities(),
        "is_tutorial": item.kind == Item.Kind.TUTORIAL,
        # What to do, shown with the tutorial item before it is answered (never for a check).
        "tutorial_instruction": (
            (item.expected or {}).get("instruction", "") if item.kind == Item.Kind.TUTORIAL else ""
        ),
        "target_html": _target_html(item, annotation),
        **protocol.page_context(campaign, item, annotation),
    }


def _place(item: Item, annotator: Annotator) -> dict:
    """``position`` of ``quota``: "item 3 of 40", or "tutorial 2 of 6" on a tutorial. The
    annotator's own numbers (``selectors.my_item_numbers``): tutorials count in neither the
    items done nor the items' total, as on "My tasks"; attention checks count in both."""
    campaign = item.campaign
    number = selectors.my_item_numbers(annotator, campaign).get(item.pk)
    kinds = selectors.item_kind_counts(campaign)
    if item.kind == Item.Kind.TUTORIAL:
        quota = kinds[Item.Kind.TUTORIAL]
    else:
        quota = campaign.max_items_per_annotator or (
            kinds[Item.Kind.REGULAR] + kinds[Item.Kind.ATTENTION_CHECK]
        )
    return {"position": number.number if number else None, "quota": quota}


@login_required
def annotate(request: HttpRequest, item_id: int) -> HttpResponse:
    item, assignment = access.item_for_annotator(request.user, item_id)
    annotator = assignment.annotator
    annotation = submissions.start_viewing(annotator, item)
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
        annotation, missing = submissions.save_draft(annotator, item, body.get("draft", {}))
    except (refusals.AnswerInvalid, refusals.NotAllowed) as exc:
        errors, _ = refusals.reasons(exc)
        return JsonResponse({"ok": False, "errors": errors}, status=refusals.http_status(exc))
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
    annotation = submissions.record_activity(assignment.annotator, item)
    return JsonResponse({"ok": True, "timeSpent": annotation.time_spent_seconds})


def _tutorial_feedback(request: HttpRequest, annotation: Annotation) -> None:
    result = qc.check_result(annotation)
    expected = annotation.item.expected or {}
    # The explanation of the right answer, else the instruction again (Appraise has only that).
    explanation = expected.get("explanation") or expected.get("instruction", "")
    if result is True:
        messages.success(request, f"Tutorial: well done. {explanation}".strip())
    elif result is False:
        messages.warning(request, f"Tutorial: not what we expected. {explanation}".strip())


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
        result = submissions.submit_annotation(annotator, item, answer, idempotency_key=key)
    except (refusals.AnswerInvalid, refusals.NotAllowed) as exc:
        errors, missing = refusals.reasons(exc)
        code = refusals.http_status(exc)
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
    annotations = list(
        Annotation.objects.filter(campaign=enrollment.campaign, annotator=enrollment.annotator)
        .select_related("item")
        .order_by("-updated_at")
    )
    # The annotator's own numbers, never an item's ids: those would tell a check (ADR 0050).
    numbers = selectors.my_item_numbers(enrollment.annotator, enrollment.campaign)
    rows = [(numbers[a.item_id].label, a) for a in annotations]
    return render(
        request,
        "annotation/my_annotations.html",
        {"campaign": enrollment.campaign, "rows": rows},
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
    # Tutorials are practice: not counted among the answers, as on "My tasks".
    submitted = (
        Annotation.objects.filter(
            campaign=campaign, annotator=annotator, status=Annotation.Status.SUBMITTED
        )
        .exclude(item__kind=Item.Kind.TUTORIAL)
        .count()
    )
    return render(
        request,
        "annotation/finish.html",
        {"campaign": campaign, "submitted": submitted, "enrollment": enrollment},
    )
