"""Pages for topic trees and their samples (seed 000). Staff only; thin adapters.

Trees can hold 100k+ topics, so the tree page never renders the whole tree: it shows the roots a
page at a time, and htmx loads one level of children when a topic is opened, or a page of search
matches as the user types.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh, HttpResponseStopPolling

from core.http import HtmxHttpRequest
from imports import ImportRefused
from imports import services as import_services
from search.models import TopicTree
from search.topics import selectors as topics
from search.topics.forms import CorpusUploadForm, TreeGenerateForm, TreeImportForm
from search.topics.generation import retry_tree_generation, start_tree_generation
from search.topics.import_kinds import (
    CORPUS_KIND,
    TREE_KIND,
    corpus_options,
    corpus_refusals,
    tree_options,
)
from search.topics.services import (
    CorpusImportError,
    TopicTreeError,
    import_corpus,
    import_topic_tree,
)

NODES_PER_PAGE = 50
MATCHES_PER_PAGE = 25
ROWS_PER_PAGE = 20

LIST_TEMPLATE = "search/topics/tree_list.html"
TREE_TEMPLATE = "search/topics/tree_detail.html"
TOPIC_TEMPLATE = "search/topics/topic_detail.html"


# --- Tree list, import and generation ----------------------------------------------------------


def _list_context(request: HttpRequest, **forms) -> dict:
    return {
        "trees": topics.tree_rows(request.user),
        "import_form": forms.get("import_form") or TreeImportForm(),
        "generate_form": forms.get("generate_form") or TreeGenerateForm(),
        "corpus_form": CorpusUploadForm(),
        "errors": forms.get("errors", []),
        "error_form": forms.get("error_form", ""),
    }


@staff_member_required
@require_GET
def tree_list(request: HtmxHttpRequest) -> HttpResponse:
    if request.htmx and request.GET.get("tree", "").isdigit():
        return _tree_row(request, int(request.GET["tree"]))
    return render(request, LIST_TEMPLATE, _list_context(request))


def _tree_row(request: HttpRequest, pk: int) -> HttpResponse:
    """One row of the list, polled while its tree is generating."""
    tree = topics.tree_rows(request.user).filter(pk=pk).first()
    if tree is None:
        return HttpResponseStopPolling("")
    html = render_to_string(f"{LIST_TEMPLATE}#tree_row", {"tree": tree}, request=request)
    if tree.status == TopicTree.Status.GENERATING:
        return HttpResponse(html)
    return HttpResponseStopPolling(html)


@staff_member_required
@require_POST
def tree_import(request: HttpRequest) -> HttpResponse:
    form = TreeImportForm(request.POST, request.FILES)
    errors: list[str] = []
    if form.is_valid():
        upload = form.cleaned_data["file"]
        if import_services.runs_in_background(upload):
            options = tree_options(
                name=form.cleaned_data["name"],
                language=form.cleaned_data["language"].strip() or "en",
                description=form.cleaned_data["description"],
                file_name=upload.name,
            )
            refused = partial(_tree_import_refused, import_form=form)
            return _import_in_background(request, TREE_KIND, upload, options, refused)
        try:
            tree = import_topic_tree(
                upload.read(),
                name=form.cleaned_data["name"],
                language=form.cleaned_data["language"].strip() or "en",
                description=form.cleaned_data["description"],
                source_file_name=upload.name,
                created_by=request.user,
            )
        except TopicTreeError as exc:
            errors = [str(exc)]
        else:
            messages.success(
                request, f"Imported {tree.name}: {tree.n_topics} topics, {tree.n_leaves} leaves."
            )
            return redirect("search:topic_tree", pk=tree.pk)
    return _tree_import_refused(request, errors, import_form=form)


def _tree_import_refused(request: HttpRequest, errors: list[str], **forms) -> HttpResponse:
    context = _list_context(request, errors=errors, error_form="import", **forms)
    return render(request, LIST_TEMPLATE, context, status=400)


def _import_in_background(
    request: HttpRequest, kind: str, upload, options: dict, refused: Callable[..., HttpResponse]
) -> HttpResponse:
    """A big file: store it, queue its import, and show the job's progress page."""
    try:
        job = import_services.start_import(kind, upload, options, created_by=request.user)
    except ImportRefused as exc:
        return refused(request, exc.errors)
    messages.info(request, f"{upload.name} is being imported by a worker.")
    return redirect("imports:job_detail", pk=job.pk)


@staff_member_required
@require_POST
def tree_generate(request: HttpRequest) -> HttpResponse:
    form = TreeGenerateForm(request.POST)
    errors: list[str] = []
    if form.is_valid():
        data = form.cleaned_data
        try:
            tree = start_tree_generation(
                data["name"],
                data["engine"],
                form.root_list(),
                data["depth"],
                data["branching"],
                data["language"].strip() or "en",
                created_by=request.user,
            )
        except TopicTreeError as exc:
            errors = [str(exc)]
        else:
            messages.success(request, f"Generating {tree.name} with {data['engine'].name}.")
            return redirect("search:topic_tree", pk=tree.pk)
    context = _list_context(request, generate_form=form, errors=errors, error_form="generate")
    return render(request, LIST_TEMPLATE, context, status=400)


@staff_member_required
@require_POST
def generation_retry(request: HttpRequest, pk: int) -> HttpResponse:
    tree = topics.tree_for_user(request.user, pk)
    if retry_tree_generation(tree):
        messages.success(request, f"Generating {tree.name} again.")
    return redirect("search:topic_tree", pk=tree.pk)


@staff_member_required
@require_POST
def corpus_upload(request: HttpRequest, pk: int) -> HttpResponse:
    tree = topics.tree_for_user(request.user, pk)
    form = CorpusUploadForm(request.POST, request.FILES)
    errors: list[str] = []
    if tree.status != TopicTree.Status.READY:
        errors = [f"{tree.name} is {tree.get_status_display().lower()}: it has no topics yet."]
    elif form.is_valid():
        upload = form.cleaned_data["file"]
        if import_services.runs_in_background(upload):
            refused = partial(_corpus_refused, tree=tree, form=form)
            options = corpus_options(tree, upload.name)
            return _import_in_background(request, CORPUS_KIND, upload, options, refused)
        try:
            report = import_corpus(tree, upload.read(), file_name=upload.name)
        except CorpusImportError as exc:
            errors = corpus_refusals(exc)[:50]
        else:
            messages.success(
                request,
                f"Added {report.created} samples from {report.lines} lines "
                f"({report.duplicates} duplicates skipped).",
            )
            return redirect("search:topic_tree", pk=tree.pk)
    return _corpus_refused(request, errors, tree=tree, form=form)


def _corpus_refused(request: HttpRequest, errors: list[str], *, tree, form) -> HttpResponse:
    context = _tree_context(request, tree) | {"corpus_form": form, "errors": errors}
    return render(request, TREE_TEMPLATE, context, status=400)


# --- Tree page: roots, lazily loaded children, search ------------------------------------------


def _attach_stats(tree: TopicTree, page: Page, run) -> Page:
    """Give each topic of the page its ``stats`` (None when no pull touched it)."""
    stats = topics.node_stats(tree, list(page), run)
    for topic in page:
        topic.stats = stats.get(topic.pk)
    return page


def _query_string(**params) -> str:
    return urlencode({key: value for key, value in params.items() if value not in (None, "")})


def _nodes_context(request: HttpRequest, tree: TopicTree, page: Page, run, parent) -> dict:
    run_id = run.pk if run else ""
    more = ""
    if page.has_next():
        query = _query_string(parent=parent.pk if parent else "", run=run_id, page=page.number + 1)
        more = f"{reverse('search:topic_children', args=[tree.pk])}?{query}"
    return {
        "tree": tree,
        "nodes": _attach_stats(tree, page, run),
        "run_id": run_id,
        "more_url": more,
    }


def _search_context(request: HttpRequest, tree: TopicTree, run) -> dict:
    query = " ".join(request.GET.get("q", "").split())[:200]
    if not query:
        return {"tree": tree, "q": "", "matches": None, "run_id": run.pk if run else ""}
    page = Paginator(topics.search_topics(tree, query), MATCHES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    return {
        "tree": tree,
        "q": query,
        "matches": _attach_stats(tree, page, run),
        "run_id": run.pk if run else "",
        "page_query": _query_string(q=query, run=run.pk if run else ""),
    }


def _tree_context(request: HttpRequest, tree: TopicTree) -> dict:
    run = topics.run_of_tree(tree, request.GET.get("run"))
    roots = Paginator(topics.child_nodes(tree, None), NODES_PER_PAGE).get_page(1)
    return {
        **_nodes_context(request, tree, roots, run, None),
        "search": _search_context(request, tree, run),
        "runs": topics.runs_of_tree(tree),
        "run": run,
        "totals": topics.tree_totals(tree, run),
        "hardest": topics.hardest_leaves(tree, run),
        "corpus_form": CorpusUploadForm(),
        "errors": [],
    }


@staff_member_required
@require_GET
def tree_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    tree = topics.tree_for_user(request.user, pk)
    if request.htmx and request.htmx.target == "tree-status":
        if tree.status != TopicTree.Status.GENERATING:
            # Generation ended: reload the page to show the finished (or failed) tree.
            return HttpResponseClientRefresh()
        return render(request, f"{TREE_TEMPLATE}#status", {"tree": tree})
    return render(request, TREE_TEMPLATE, _tree_context(request, tree))


@staff_member_required
@require_GET
def tree_children(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """One level of children (``?parent=``; the roots without it), a page at a time."""
    tree = topics.tree_for_user(request.user, pk)
    parent_id = request.GET.get("parent", "")
    parent = None
    if parent_id.isdigit():
        parent = topics.topic_for_user(request.user, int(parent_id))
        if parent.tree_id != tree.pk:
            return HttpResponse("That topic is not in this tree.", status=404)
    if not request.htmx:
        # Without JavaScript the topic page lists the same children.
        if parent is not None:
            return redirect("search:topic_detail", pk=parent.pk)
        return redirect("search:topic_tree", pk=tree.pk)
    run = topics.run_of_tree(tree, request.GET.get("run"))
    page = Paginator(topics.child_nodes(tree, parent), NODES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = _nodes_context(request, tree, page, run, parent)
    return render(request, f"{TREE_TEMPLATE}#nodes", context)


@staff_member_required
@require_GET
def tree_search(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    tree = topics.tree_for_user(request.user, pk)
    if not request.htmx:
        url = reverse("search:topic_tree", args=[tree.pk])
        return redirect(f"{url}?{_query_string(**request.GET.dict())}")
    run = topics.run_of_tree(tree, request.GET.get("run"))
    context = {"search": _search_context(request, tree, run)}
    return render(request, f"{TREE_TEMPLATE}#search_results", context)


# --- Topic page ------------------------------------------------------------------------------


@staff_member_required
@require_GET
def topic_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    topic = topics.topic_for_user(request.user, pk)
    samples = Paginator(topics.topic_samples(topic), ROWS_PER_PAGE).get_page(
        request.GET.get("samples")
    )
    pulls = Paginator(topics.topic_pulls(topic), ROWS_PER_PAGE).get_page(request.GET.get("pulls"))
    children = None
    if topic.arm is None:
        children = Paginator(topics.child_nodes(topic.tree, topic), NODES_PER_PAGE).get_page(
            request.GET.get("children")
        )
        _attach_stats(topic.tree, children, None)
    context = {
        "topic": topic,
        "tree": topic.tree,
        "ancestors": topics.ancestors_of(topic),
        "samples": samples,
        "pulls": pulls,
        "children": children,
        "stats": topics.node_stats(topic.tree, [topic], None).get(topic.pk),
        "by_run": topics.leaf_stats_by_run(topic) if topic.arm is not None else [],
    }
    section = request.GET.get("section")
    if request.htmx and section in {"samples", "pulls"}:
        return render(request, f"{TOPIC_TEMPLATE}#{section}", context)
    return render(request, TOPIC_TEMPLATE, context)
