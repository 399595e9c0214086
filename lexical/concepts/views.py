"""Pages of concepts and example selections (staff only). Thin: parse, call one service or
selector, render. Edits are plain POST forms that redirect back (no JavaScript needed); with
htmx they answer the page's ``editor`` partial, which replaces itself in place."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.http import HtmxHttpRequest
from lexical.concepts import services
from lexical.concepts.forms import (
    ConceptFilterForm,
    MergeForm,
    RejectForm,
    SelectionForm,
    SplitForm,
)
from lexical.concepts.selectors import (
    concept_for_user,
    concepts_for_user,
    filter_choices,
    filter_concepts,
    selection_examples,
    selection_for_user,
    selections_for_user,
    variation_examples,
)
from lexical.models import Concept
from lexical.rules.selectors import rule_generators

LIST = "lexical/concepts/concept_list.html"
DETAIL = "lexical/concepts/concept_detail.html"
CONCEPTS_PER_PAGE = 50


@staff_member_required
@require_GET
def concept_list(request: HtmxHttpRequest) -> HttpResponse:
    form = ConceptFilterForm(request.GET or None)
    visible = concepts_for_user(request.user)
    concepts = filter_concepts(visible.select_related("mining_job"), form.filters())
    page = Paginator(concepts, CONCEPTS_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "choices": filter_choices(visible),
    }
    return render(request, f"{LIST}#concepts" if request.htmx else LIST, context)


def _detail_context(concept: Concept, **extra) -> dict:
    return {
        "concept": concept,
        "rules": rule_generators(concept),
        "variations": variation_examples(concept),
        "merge_form": MergeForm(),
        "split_form": SplitForm(),
        "reject_form": RejectForm(),
        **extra,
    }


@staff_member_required
@require_GET
def concept_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    concept = concept_for_user(request.user, pk)
    return render(request, DETAIL, _detail_context(concept))


# What an edit does to a concept, given its valid form and the URL's other arguments; returns
# what happened, in words.
Apply = Callable[..., str]


def _edit(request: HtmxHttpRequest, pk: int, form_class, apply: Apply, **url_args) -> HttpResponse:
    """Validate ``form_class``, run ``apply`` and answer the editor partial (htmx) or redirect
    back to the concept page."""
    concept = concept_for_user(request.user, pk)
    form = form_class(request.POST)
    error = ""
    done = ""
    if not form.is_valid():
        error = "; ".join(f"{k}: {v[0]}" for k, v in form.errors.items())
    else:
        try:
            done = apply(concept, form, **url_args)
        except services.ConceptEditError as exc:
            error = str(exc)
    if request.htmx:
        concept.refresh_from_db()
        context = _detail_context(concept, edit_error=error, edit_done=done)
        # 200 either way: htmx swaps only 2xx answers, and the partial shows the error.
        return render(request, f"{DETAIL}#editor", context)
    if error:
        messages.error(request, f"Nothing changed: {error}")
    else:
        messages.success(request, done)
    return redirect("lexical:concept_detail", pk=concept.pk)


def _edit_view(form_class, apply: Apply) -> Callable[..., HttpResponse]:
    """A staff-only POST view that edits the concept ``pk`` with ``apply`` (see :func:`_edit`)."""

    @staff_member_required
    @require_POST
    def view(request: HtmxHttpRequest, pk: int, **url_args) -> HttpResponse:
        return _edit(request, pk, form_class, apply, **url_args)

    return view


class _NoFields(RejectForm):
    """Actions whose only input is in the URL."""

    note = None  # type: ignore[assignment]


def _merge(concept: Concept, form) -> str:
    data = form.cleaned_data
    kept = services.merge_variations(concept, data["keep"], data["absorb"])
    return f"Merged into {kept.label} (count {kept.count})."


def _split(concept: Concept, form) -> str:
    data = form.cleaned_data
    new = services.split_variation(concept, data["variation"], form.forms_to_move(), data["lemma"])
    return f"Split off {new.label} (count {new.count})."


def _drop(concept: Concept, form, variation: int) -> str:
    return f"Dropped {services.drop_variation(concept, variation).label}."


def _restore_variation(concept: Concept, form, variation: int) -> str:
    return f"Restored {services.restore_variation(concept, variation).label}."


def _reject(concept: Concept, form) -> str:
    services.reject_concept(concept, form.cleaned_data["note"])
    return f"Rejected {concept}."


def _restore(concept: Concept, form) -> str:
    services.restore_concept(concept)
    return f"Restored {concept}."


concept_merge = _edit_view(MergeForm, _merge)
concept_split = _edit_view(SplitForm, _split)
variation_drop = _edit_view(_NoFields, _drop)
variation_restore = _edit_view(_NoFields, _restore_variation)
concept_reject = _edit_view(RejectForm, _reject)
concept_restore = _edit_view(_NoFields, _restore)


# --- Example selections (App. A.2) ------------------------------------------------------


@staff_member_required
@require_GET
def selection_list(request: HtmxHttpRequest) -> HttpResponse:
    page = Paginator(selections_for_user(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "lexical/concepts/selection_list.html", {"page": page})


@staff_member_required
@require_http_methods(["GET", "POST"])
def selection_create(request: HtmxHttpRequest) -> HttpResponse:
    initial = {key: request.GET[key] for key in ("mining_job", "concepts") if key in request.GET}
    form = SelectionForm(request.POST or None, initial=initial)
    error = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            concepts, source = services.concepts_to_select(
                concepts_for_user(request.user),
                mining_job=data["mining_job"],
                concept_ids=data["concepts"],
            )
            selection = services.create_example_selection(
                concepts, name=data["name"], seed=data["seed"], params=form.params(), source=source
            )
        except services.SelectionError as exc:
            if exc.field in form.fields:
                form.add_error(exc.field, str(exc))
            else:
                error = str(exc)
        else:
            messages.success(request, f"Selected {selection.selected.count()} examples.")
            return redirect("lexical:selection_detail", pk=selection.pk)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "error": error}
    return render(request, "lexical/concepts/selection_form.html", context, status=status)


@staff_member_required
@require_GET
def selection_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    selection = selection_for_user(request.user, pk)
    context = {
        "selection": selection,
        "rows": selection_examples(selection),
        "skipped": sorted(selection.params.get("skipped", {}).items(), key=lambda kv: int(kv[0])),
    }
    return render(request, "lexical/concepts/selection_detail.html", context)
