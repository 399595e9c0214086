"""Pages of parallel corpora (staff only). Thin: parse, call one service or selector, render."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from core.http import HtmxHttpRequest
from lexical.corpora.forms import CorpusImportForm
from lexical.corpora.selectors import corpora_for_user, corpus_for_user, corpus_pairs
from lexical.corpora.services import CorpusImportError, import_uploaded_corpus
from lexical.mining.selectors import mining_jobs_for_user

DETAIL = "lexical/corpora/corpus_detail.html"
PAIRS_PER_PAGE = 25
MINING_JOBS_SHOWN = 20


@staff_member_required
@require_GET
def corpus_list(request: HtmxHttpRequest) -> HttpResponse:
    page = Paginator(corpora_for_user(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "lexical/corpora/corpus_list.html", {"page": page})


@staff_member_required
@require_http_methods(["GET", "POST"])
def corpus_import(request: HtmxHttpRequest) -> HttpResponse:
    form = CorpusImportForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            corpus = import_uploaded_corpus(
                form.corpus_source(), form.cleaned_data, created_by=request.user
            )
        except CorpusImportError as exc:
            errors = [str(exc)]
        else:
            messages.success(request, f"Imported {corpus.name}: {corpus.size} sentence pairs.")
            return redirect("lexical:corpus_detail", pk=corpus.pk)
    status = 400 if errors or (request.method == "POST" and form.errors) else 200
    context = {"form": form, "errors": errors}
    return render(request, "lexical/corpora/corpus_import.html", context, status=status)


@staff_member_required
@require_GET
def corpus_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    corpus = corpus_for_user(request.user, pk)
    paginator = Paginator(corpus_pairs(corpus), PAIRS_PER_PAGE)
    # The import stored the size: no COUNT(*) over millions of pairs on every page view.
    paginator.count = corpus.size
    page = paginator.get_page(request.GET.get("page"))
    mining_jobs = mining_jobs_for_user(request.user).filter(corpus=corpus).order_by("-id")
    context = {"corpus": corpus, "page": page, "mining_jobs": mining_jobs[:MINING_JOBS_SHOWN]}
    template = f"{DETAIL}#pairs" if request.htmx else DETAIL
    return render(request, template, context)
