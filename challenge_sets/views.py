"""Curation pages. Thin: look the set up through ``access``, call one service or selector.

The item table is one page with a named partial (``#table``): filters, sorting and paging
swap just the table with htmx and keep a plain link/form fallback. Every view answers 404 to
anybody without the curation permission, as if sets did not exist.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from challenge_sets import access, charts, exports, selectors, services, sources, validation
from challenge_sets.forms import ChallengeSetForm, DecideForm, source_form
from challenge_sets.import_kinds import JSONL_KIND, in_background, jsonl_options
from challenge_sets.models import ChallengeItem
from challenge_sets.services import ChallengeSetError
from challenge_sets.sources import SourceError
from challenge_sets.versions import freeze_version
from core.http import HtmxHttpRequest
from imports import ImportRefused
from imports import services as import_services


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    access.require_curator(request.user)
    sets = selectors.set_rows(access.sets_for(request.user))
    return render(request, "challenge_sets/index.html", {"sets": sets})


@login_required
@require_http_methods(["GET", "POST"])
def set_new(request: HttpRequest) -> HttpResponse:
    access.require_curator(request.user)
    form = ChallengeSetForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            challenge_set = services.create_challenge_set(
                name=form.cleaned_data["name"],
                description=form.cleaned_data["description"],
                language_pairs=form.language_pair_list(),
                licence=form.cleaned_data["licence"],
                provenance_notes=form.cleaned_data["provenance_notes"],
                policy=form.policy(),
                created_by=request.user,
            )
        except ChallengeSetError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("challenge_sets:set_detail", pk=challenge_set.pk)
    status = 400 if form.errors else 200
    return render(request, "challenge_sets/set_new.html", {"form": form}, status=status)


def _source_forms(data=None, files=None, only: str = ""):
    return [
        (source, source_form(source, data if source.name == only else None, files))
        for source in sources.all_sources()
    ]


def _detail_context(request: HttpRequest, challenge_set, **extra) -> dict:
    state = selectors.TableState.from_query(request.GET)
    stats = selectors.statistics(challenge_set)
    query = dict(state.filters)
    return {
        "set": challenge_set,
        "policy": challenge_set.get_policy(),
        "state": state,
        "page": selectors.item_page(challenge_set, state),
        "options": selectors.filter_options(challenge_set),
        "statuses": ChallengeItem.Status.choices,
        "filter_query": urlencode(query),
        "sort_query": urlencode(query | {"sort": state.sort,
                                         "dir": "desc" if state.descending else "asc"}),
        "sort_urls": {column: urlencode(query | {"sort": column, "dir": "desc" if (
            state.sort == column and not state.descending) else "asc"})
            for column in selectors.SORTS},
        "stats": stats,
        "versions": selectors.versions(challenge_set),
        "formats": exports.FORMATS,
        "audit": selectors.audit_log(challenge_set, limit=30),
        "source_forms": extra.pop("source_forms", None) or _source_forms(),
        "decide_form": DecideForm(),
        **extra,
    }  # fmt: skip


@login_required
@require_GET
def set_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    context = _detail_context(request, challenge_set)
    if request.htmx and request.htmx.target == "item-table":
        return render(request, "challenge_sets/set_detail.html#table", context)
    return render(request, "challenge_sets/set_detail.html", context)


@login_required
@require_GET
def difficulty_chart(request: HttpRequest, pk: int) -> HttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    stats = selectors.statistics(challenge_set)
    response = HttpResponse(
        charts.difficulty_svg(stats["automatic"], stats["human"]), content_type="image/svg+xml"
    )
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


@login_required
@require_POST
def add_from_source(request: HttpRequest, pk: int, source: str) -> HttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    try:
        item_source = sources.get(source)
    except SourceError:
        raise Http404("No such source") from None
    form = source_form(item_source, request.POST, request.FILES)
    errors: list[str] = []
    if form.is_valid():
        upload = form.cleaned_data.get("file")
        try:
            if upload is not None and in_background(source, upload):
                options = jsonl_options(challenge_set, upload.name)
                job = import_services.start_import(
                    JSONL_KIND, upload, options, created_by=request.user
                )
                messages.info(request, f"{upload.name} is being imported by a worker.")
                return redirect("imports:job_detail", pk=job.pk)
            result = services.add_items_from_source(
                challenge_set, source, form.cleaned_data, user=request.user
            )
        except (SourceError, ImportRefused) as exc:
            errors = exc.errors
        else:
            messages.success(
                request,
                f"Added {result.added} items ({result.skipped} already in the set, "
                f"{result.near_duplicates} near-duplicates flagged).",
            )
            return redirect("challenge_sets:set_detail", pk=pk)
    forms_ = [(s, form if s.name == source else f) for s, f in _source_forms()]
    context = _detail_context(
        request, challenge_set, source_forms=forms_, source_errors=errors, open_source=source
    )
    return render(request, "challenge_sets/set_detail.html", context, status=400)


def _back(request: HttpRequest, pk: int) -> HttpResponse:
    url = reverse("challenge_sets:set_detail", args=[pk])
    query = request.POST.get("return_query", "")
    return redirect(f"{url}?{query}" if query else url)


@login_required
@require_POST
def send(request: HttpRequest, pk: int) -> HttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    try:
        sent, unsendable = validation.send_for_validation(challenge_set, user=request.user)
    except ChallengeSetError as exc:
        messages.error(request, str(exc))
    else:
        note = f" ({unsendable} cannot be judged with this protocol)" if unsendable else ""
        campaign = challenge_set.campaign.name if challenge_set.campaign else "annotation"
        messages.success(request, f"Sent {sent} items to {campaign}{note}.")
    return _back(request, pk)


@login_required
@require_POST
def refresh(request: HttpRequest, pk: int) -> HttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    updated = validation.refresh_results(challenge_set)
    messages.success(request, f"Read human results for {updated} items.")
    return _back(request, pk)


@login_required
@require_POST
def decide(request: HttpRequest, pk: int) -> HttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    form = DecideForm(request.POST)
    ids = [int(i) for i in request.POST.getlist("items") if i.isdigit()]
    if not form.is_valid():
        messages.error(request, "Choose accept, reject or needs review.")
    else:
        try:
            n = services.decide_items(
                challenge_set, ids, form.cleaned_data["status"],
                reason=form.cleaned_data["reason"], user=request.user,
            )  # fmt: skip
        except ChallengeSetError as exc:
            messages.error(request, str(exc))
        else:
            label = ChallengeItem.Status(form.cleaned_data["status"]).label.lower()
            messages.success(request, f"{n} item{'s' if n != 1 else ''} marked {label}.")
    if request.POST.get("next") == "item" and len(ids) == 1:
        return redirect("challenge_sets:item_detail", pk=pk, item_id=ids[0])
    return _back(request, pk)


@login_required
@require_POST
def freeze(request: HttpRequest, pk: int) -> HttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    try:
        version = freeze_version(challenge_set, user=request.user)
    except ChallengeSetError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Froze v{version.number}: {version.n_items} items.")
    return _back(request, pk)


@login_required
@require_GET
def item_detail(request: HttpRequest, pk: int, item_id: int) -> HttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    item = selectors.item_detail(challenge_set, item_id)
    if item is None:
        raise Http404("No such item")
    context = {
        "set": challenge_set,
        "item": item,
        "audit": selectors.audit_log(challenge_set, item=item),
        "decide_form": DecideForm(),
        "translations": [
            (system, text, (item.human.get("scores") or {}).get(system))
            for system, text in sorted(item.translations.items())
        ],
        "provenance_json": json.dumps(item.provenance, ensure_ascii=False, indent=2),
        "human_json": json.dumps(item.human, ensure_ascii=False, indent=2),
    }
    return render(request, "challenge_sets/item_detail.html", context)


@login_required
@require_GET
def download(
    request: HttpRequest, pk: int, number: int, fmt: str
) -> HttpResponse | StreamingHttpResponse:
    challenge_set = access.challenge_set_for(request.user, pk)
    version = selectors.version_of(challenge_set, number)
    if version is None:
        raise Http404("No such version")
    try:
        chunks = exports.stream(version, fmt)
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    response = StreamingHttpResponse(chunks, content_type=exports.content_type(version, fmt))
    response["Content-Disposition"] = f'attachment; filename="{exports.filename(version, fmt)}"'
    response["X-Content-SHA256-Items"] = version.checksum
    return response
