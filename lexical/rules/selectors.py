"""Reads of rule generation: the prompt's example sentences, jobs a user may see, and a
concept's rules side by side per generator."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet
from django.http import Http404

from core.access import visible_or_404
from engines.models import Engine
from lexical.models import Concept, ConceptExample, Rule, RuleJob, RuleJobConcept, Variation
from lexical.rules.prompts import RulePrompt, VariationSentences

__all__ = [
    "ConceptRules",
    "concept_for_user",
    "concept_rules",
    "job_concepts",
    "job_for_user",
    "jobs_for_user",
    "rule_generators",
    "rule_prompt",
    "rules_for_user",
]


def simulated_engines(names: list[str]) -> set[str]:
    """Which of these engines are offline simulations (their pages say so)."""
    kinds = Engine.objects.filter(name__in=names).values_list("name", "kind")
    return {name for name, kind in kinds if kind == Engine.Kind.LEXICAL_WORLD}


def jobs_for_user(user) -> QuerySet[RuleJob]:
    """Rule jobs are staff work, like mining: everyone else sees none."""
    if not (user.is_authenticated and user.is_staff):
        return RuleJob.objects.none()
    return RuleJob.objects.all()


def job_for_user(user, pk: int) -> RuleJob:
    """The job, or a 404 whether it is missing or not the user's to see."""
    return visible_or_404(jobs_for_user(user), pk, "no such rule job")


def concept_for_user(user, pk: int) -> Concept:
    if not (user.is_authenticated and user.is_staff):
        raise Http404("no such concept")
    return visible_or_404(Concept.objects.all(), pk, "no such concept")


def rules_for_user(user) -> QuerySet[Rule]:
    if not (user.is_authenticated and user.is_staff):
        return Rule.objects.none()
    return Rule.objects.select_related("variation", "job")


def job_concepts(job: RuleJob) -> QuerySet[RuleJobConcept]:
    return job.job_concepts.select_related("concept").order_by("position")


def live_variations(concept: Concept) -> list[Variation]:
    return list(concept.variations.filter(dropped=False).order_by("-count", "lemma", "id"))


def _sentences(variation: Variation, limit: int, max_tokens: int) -> tuple[str, ...]:
    """The ``limit`` longest distinct source sentences under ``max_tokens`` tokens (§3)."""
    rows = (
        ConceptExample.objects.filter(variation=variation, src_tokens__lt=max_tokens)
        .select_related("pair")
        .order_by("-src_tokens", "id")
    )
    seen: dict[str, None] = {}
    # Reads in slices: a variation seen 100k times needs only its first few rows.
    for start in range(0, 10 * limit + 1, 2 * limit):
        batch = list(rows[start : start + 2 * limit])
        for example in batch:
            text = " ".join(example.source_text.split())
            if text:
                seen.setdefault(text, None)
            if len(seen) >= limit:
                return tuple(list(seen)[:limit])
        if len(batch) < 2 * limit:
            break
    return tuple(seen)


def rule_prompt(concept: Concept, params: dict) -> tuple[RulePrompt, dict[str, int]]:
    """The concept's prompt and its variation ids by label (live variations only)."""
    variations = live_variations(concept)
    limit = int(params["sentences_per_variation"])
    max_tokens = int(params["max_sentence_tokens"])
    blocks = tuple(
        VariationSentences(v.label, v.lemma, _sentences(v, limit, max_tokens)) for v in variations
    )
    prompt = RulePrompt(concept.lemma, concept.src_lang, concept.tgt_lang, blocks)
    return prompt, {v.label: v.pk for v in variations}


@dataclass
class RuleCell:
    text: str = ""
    status: str = ""
    status_label: str = ""
    job_id: int | None = None
    error: str = ""


@dataclass
class RuleRow:
    variation: Variation
    cells: list[RuleCell] = field(default_factory=list)


@dataclass
class ConceptRules:
    """A concept's rules as a table: variations × generators, newest job per generator."""

    concept: Concept
    generators: list[str]
    jobs: dict[str, RuleJob]
    failures: dict[str, str]
    rows: list[RuleRow]

    simulated: set[str] = field(default_factory=set)

    @property
    def columns(self) -> list[tuple[str, RuleJob, bool]]:
        return [(name, self.jobs[name], name in self.simulated) for name in self.generators]


def rule_generators(concept: Concept) -> list[str]:
    """The engines that wrote rules for ``concept``, by name."""
    rows = Rule.objects.filter(concept=concept).order_by("generator")
    return list(rows.values_list("generator", flat=True).distinct())


def concept_rules(concept: Concept) -> ConceptRules:
    outcomes = (
        RuleJobConcept.objects.filter(concept=concept)
        .exclude(status=RuleJobConcept.Status.PENDING)
        .select_related("job")
        .order_by("-job__created_at", "-job_id")
    )
    jobs: dict[str, RuleJob] = {}
    failures: dict[str, str] = {}
    for outcome in outcomes:
        name = outcome.job.engine
        if name in jobs:
            continue  # an older job of the same generator
        jobs[name] = outcome.job
        if outcome.status == RuleJobConcept.Status.FAILED:
            failures[name] = outcome.error
    generators = sorted(jobs)
    rules = {
        (r.variation_id, r.generator): r
        for r in Rule.objects.filter(
            concept=concept, job__in=[jobs[g] for g in generators]
        ).select_related("variation")
    }
    variations = list(concept.variations.order_by("dropped", "-count", "lemma", "id"))
    rows = []
    for variation in variations:
        row = RuleRow(variation)
        for name in generators:
            rule = rules.get((variation.pk, name))
            if rule is None:
                row.cells.append(RuleCell(job_id=jobs[name].pk, error=failures.get(name, "")))
            else:
                row.cells.append(
                    RuleCell(
                        rule.text,
                        rule.validation_status,
                        rule.get_validation_status_display(),
                        rule.job_id,
                    )
                )
        if row.variation.dropped and not any(c.text for c in row.cells):
            continue
        rows.append(row)
    return ConceptRules(concept, generators, jobs, failures, rows, simulated_engines(generators))
