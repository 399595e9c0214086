"""The lexical home page: what there is at each stage (corpora, mining, concepts, selections,
rules, evaluations)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from lexical.concepts.selectors import concepts_for_user, selections_for_user
from lexical.corpora.selectors import corpora_for_user
from lexical.models import Concept, LexicalEvaluation, MiningJob, RuleJob, RuleValidationStudy

SHOWN = 10


@staff_member_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    concepts = concepts_for_user(request.user).order_by()
    by_language = (
        concepts.values("src_lang", "tgt_lang")
        .annotate(total=Count("id"), active=Count("id", filter=Q(status=Concept.Status.ACTIVE)))
        .order_by("src_lang", "tgt_lang")
    )
    context = {
        "corpora": corpora_for_user(request.user)[:SHOWN],
        "n_corpora": corpora_for_user(request.user).count(),
        "concept_languages": list(by_language),
        "selections": selections_for_user(request.user)[:SHOWN],
        # Staff see every job (the page is staff-only, like each job's own list).
        "n_mining_jobs": MiningJob.objects.count(),
        "n_rule_jobs": RuleJob.objects.count(),
        "n_evaluations": LexicalEvaluation.objects.count(),
        "n_rule_validations": RuleValidationStudy.objects.count(),
    }
    return render(request, "lexical/home.html", context)
