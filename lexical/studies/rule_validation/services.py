"""Create a rule-validation study (seed 004 §2.2, App. A Fig. 3) and write its verdicts back.

One questionnaire item per concept asks (a) whether a variation is missing (family ``recall``),
(b) which listed variations do not mean the concept (family ``precision``, "none of these"
allowed) and (c) for each generated rule whether it is correct (family ``rules``; the rule id
and generator stay in the item's ``meta``, never on the page, so generators are judged blind).
Attention checks list a variation of another concept, which must be marked.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import Campaign
from annotation.protocols.questionnaire import MAX_OPTIONS, MAX_QUESTIONS, PROMPT_MAX_LENGTH
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import create_campaign
from lexical.models import Concept, MiningJob, Rule, RuleJob, RuleValidationStudy
from lexical.recruiting import recruiting_settings
from lexical.studies.rule_validation import results
from lexical.studies.rule_validation.selectors import ORIGIN, study_judgments

DEFAULT_OVERLAP = 3
DEFAULT_ATTENTION_CHECKS = 2
# Who may join (lexical.recruiting): native speakers of the target language by default.
RECRUITING_DEFAULTS = {"native_speakers": True, "one_study_per_person": False}
MAX_CONCEPTS = 5000
RECALL, PRECISION = "recall", "precision"
NONE_LABEL = "None of these: every listed word can mean it"
INSTRUCTIONS = (
    "Each page names an English word and the words of your language that translate it. "
    "Say whether a translation is missing from the list, mark the listed words that do NOT "
    "mean the English word, and say whether each rule (when to use which word) is correct."
)


class StudyConfigError(ValueError):
    """The study is refused; ``errors`` maps each field to what is wrong. Nothing is written."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


def _int(config: Mapping[str, Any], key: str, default: int | None, low: int, high: int) -> Any:
    value = config.get(key, default)
    if value in (None, ""):
        return default
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
        raise StudyConfigError({key: f"must be a whole number from {low} to {high}"})
    number = int(value)
    if not low <= number <= high:
        raise StudyConfigError({key: f"must be from {low} to {high}, got {number}"})
    return number


def _flag(config: Mapping[str, Any], key: str, default: bool) -> bool:
    value = config.get(key, default)
    if not isinstance(value, bool):
        raise StudyConfigError({key: "must be true or false"})
    return value


def _ids(config: Mapping[str, Any], key: str) -> list[int]:
    raw = config.get(key) or []
    if not isinstance(raw, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 < v < 10**12 for v in raw
    ):
        raise StudyConfigError({key: "must be a list of ids"})
    return sorted(set(raw))


def _concept_pool(config: Mapping[str, Any]) -> tuple[MiningJob | None, list[Concept]]:
    mining_job_id = config.get("mining_job")
    tgt_lang = config.get("tgt_lang")
    if mining_job_id not in (None, ""):
        job = MiningJob.objects.filter(pk=_int(config, "mining_job", None, 1, 10**12)).first()
        if job is None:
            raise StudyConfigError({"mining_job": f"no mining job #{mining_job_id}"})
        return job, list(job.concepts.filter(status=Concept.Status.ACTIVE).order_by("id"))
    if isinstance(tgt_lang, str) and "\x00" in tgt_lang:
        raise StudyConfigError({"tgt_lang": "must be a language code such as 'es'"})
    if isinstance(tgt_lang, str) and tgt_lang.strip():
        concepts = Concept.objects.filter(
            tgt_lang=tgt_lang.strip()[:16], status=Concept.Status.ACTIVE
        ).order_by("id")
        return None, list(concepts)
    raise StudyConfigError({"mining_job": "choose a mining job, or give a target language"})


def _sample(concepts: list[Concept], cap: int | None, seed: int) -> list[Concept]:
    """At most ``cap`` concepts, drawn reproducibly from ``seed``, kept in id order."""
    if cap is None or len(concepts) <= cap:
        return concepts
    chosen = random.Random(seed).sample(concepts, cap)
    return sorted(chosen, key=lambda c: c.pk)


def _listed(concept: Concept) -> list[Any]:
    return [v for v in concept.variations.all() if not v.dropped]


def isolated(word: str) -> str:
    """``word`` in Unicode first-strong isolates (FSI … PDI): an Arabic or Persian word inside
    an English prompt then keeps its place, and a list of them keeps its order."""
    return f"\u2068{word}\u2069"


def _word_list(labels: list[str]) -> str:
    return ", ".join(isolated(label) for label in labels)


def _rule_prompt(label: str, text: str) -> str:
    prompt = f"Is this rule correct? “{isolated(label)}”: {text.strip()}"
    return prompt[: PROMPT_MAX_LENGTH - 1] + "…" if len(prompt) > PROMPT_MAX_LENGTH else prompt


def _concept_item(
    concept: Concept, variations: list[Any], rules: list[Rule], rng: random.Random
) -> dict[str, Any]:
    labels = [v.label for v in variations]
    questions: list[dict[str, Any]] = [
        {
            "id": RECALL,
            "family": RECALL,
            "type": "yes_no",
            "prompt": f"Is any variation of “{concept.lemma}” missing from this list: "
            f"{_word_list(labels)}?",
        },
        {
            "id": PRECISION,
            "family": PRECISION,
            "type": "multiple",
            "prompt": f"Which of these listed words do NOT mean “{concept.lemma}”?",
            "options": labels,
            "none_label": NONE_LABEL,
        },
    ]
    shown = list(rules)
    # Generators are judged blind: their rules are mixed in an order fixed by the study's seed.
    rng.shuffle(shown)
    rule_meta = {}
    for rule in shown:
        qid = f"rule-{rule.pk}"
        questions.append(
            {
                "id": qid,
                "family": "rules",
                "type": "yes_no",
                "prompt": _rule_prompt(rule.variation.label, rule.text),
            }
        )
        rule_meta[qid] = {
            "rule_id": rule.pk,
            "generator": rule.generator,
            "variation_id": rule.variation_id,
        }
    return {
        "doc_id": f"concept-{concept.pk}",
        "seg_id": "rules",
        "src_lang": concept.src_lang,
        "tgt_lang": concept.tgt_lang,
        "source": _concept_text(concept),
        "questions": questions,
        "origin": ORIGIN,
        "origin_ref": str(concept.pk),
        "meta": {
            "concept_id": concept.pk,
            "concept": concept.lemma,
            "pos": concept.pos,
            "variation_ids": [v.pk for v in variations],
            "rules": rule_meta,
        },
    }


def _concept_text(concept: Concept) -> str:
    return f"{concept.lemma} ({concept.pos})" if concept.pos else concept.lemma


def _check_item(
    number: int, concept: Concept, variations: list[Any], intruder: str, rng: random.Random
) -> dict[str, Any]:
    """A concept's two most frequent variations and another concept's word, which must be
    marked as not meaning it (the expected answer lists only the intruder)."""
    options = [v.label for v in variations[:2]] + [intruder]
    rng.shuffle(options)
    return {
        "doc_id": f"check-{number}",
        "seg_id": "rules",
        "kind": "attention_check",
        "src_lang": concept.src_lang,
        "tgt_lang": concept.tgt_lang,
        "source": _concept_text(concept),
        "questions": [
            {
                "id": RECALL,
                "family": RECALL,
                "type": "yes_no",
                "prompt": f"Is any variation of “{concept.lemma}” missing from this list: "
                f"{_word_list(options)}?",
            },
            {
                "id": PRECISION,
                "family": PRECISION,
                "type": "multiple",
                "prompt": f"Which of these listed words do NOT mean “{concept.lemma}”?",
                "options": options,
                "none_label": NONE_LABEL,
            },
        ],
        "expected": {
            "answers": {PRECISION: [options.index(intruder)]},
            "explanation": f"“{intruder}” translates another word, not “{concept.lemma}”.",
        },
        "origin": ORIGIN,
        "origin_ref": f"check:{concept.pk}",
        "meta": {"concept_id": concept.pk, "intruder": intruder},
    }


def _checks(
    count: int, concepts: list[Concept], listed: dict[int, list[Any]], rng: random.Random
) -> list[dict[str, Any]]:
    if count == 0:
        return []
    if len(concepts) < 2:
        raise StudyConfigError(
            {"attention_checks": "attention checks borrow a word of another concept: "
             "the study needs at least 2 concepts, or set attention_checks to 0"}
        )  # fmt: skip
    items = []
    for number in range(count):
        concept = concepts[rng.randrange(len(concepts))]
        own = {v.label for v in listed[concept.pk]}
        others = [
            v.label for c in concepts if c.pk != concept.pk for v in listed[c.pk]
            if v.label not in own
        ]  # fmt: skip
        if not others:
            raise StudyConfigError(
                {"attention_checks": f"no word of another concept differs from {concept}'s"}
            )
        items.append(_check_item(number + 1, concept, listed[concept.pk], rng.choice(others), rng))
    return items


def _rule_jobs(config: Mapping[str, Any]) -> list[RuleJob]:
    ids = _ids(config, "rule_jobs")
    if not ids:
        raise StudyConfigError({"rule_jobs": "choose at least one rule job"})
    jobs = list(RuleJob.objects.filter(pk__in=ids).order_by("pk"))
    missing = sorted(set(ids) - {j.pk for j in jobs})
    if missing:
        raise StudyConfigError({"rule_jobs": f"no rule job #{missing[0]}"})
    return jobs


def _plan(config: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the study needs, read and checked before anything is written."""
    name = config.get("name")
    if not isinstance(name, str) or not name.strip():
        raise StudyConfigError({"name": "give the campaign a name"})
    name = name.strip()[:200]
    if any(ord(ch) < 32 for ch in name):
        raise StudyConfigError({"name": "must not contain control characters"})
    if Campaign.objects.filter(name=name).exists():
        raise StudyConfigError({"name": f"a campaign named {name!r} already exists"})
    seed = _int(config, "seed", 0, 0, 2**31 - 1)
    cap = _int(config, "max_concepts", None, 1, MAX_CONCEPTS)
    overlap = _int(config, "overlap", DEFAULT_OVERLAP, 1, 20)
    n_checks = _int(config, "attention_checks", DEFAULT_ATTENTION_CHECKS, 0, 50)
    recruiting = {key: _flag(config, key, default) for key, default in RECRUITING_DEFAULTS.items()}
    jobs = _rule_jobs(config)
    mining_job, pool = _concept_pool(config)
    if not pool:
        raise StudyConfigError({"mining_job": "no active concept to validate there"})
    if cap is None and len(pool) > MAX_CONCEPTS:
        raise StudyConfigError(
            {"max_concepts": f"{len(pool)} concepts: sample at most {MAX_CONCEPTS}"}
        )
    concepts = _sample(pool, cap, seed)
    rules_by_concept: dict[int, list[Rule]] = {}
    rules = Rule.objects.filter(
        job__in=jobs, concept__in=concepts, variation__dropped=False
    ).select_related("variation")
    for rule in rules.order_by("id"):
        rules_by_concept.setdefault(rule.concept_id, []).append(rule)
    if not rules_by_concept:
        raise StudyConfigError(
            {"rule_jobs": "these rule jobs wrote no rule for the chosen concepts"}
        )
    return {
        "name": name,
        "seed": seed,
        "cap": cap,
        "overlap": overlap,
        "n_checks": n_checks,
        "jobs": jobs,
        "mining_job": mining_job,
        "concepts": concepts,
        "rules": rules_by_concept,
        "recruiting": recruiting,
    }


def _items(plan: dict[str, Any]) -> tuple[list[dict], list[Concept], dict[str, list[int]]]:
    rng = random.Random(plan["seed"])
    items: list[dict[str, Any]] = []
    kept: list[Concept] = []
    left_out: dict[str, list[int]] = {"too_few_variations": [], "too_many": []}
    listed: dict[int, list[Any]] = {}
    for concept in plan["concepts"]:
        variations = _listed(concept)
        rules = plan["rules"].get(concept.pk, [])
        # The precision question needs 2 to MAX_OPTIONS options, and every item fits the
        # protocol's question limit: such concepts are left out, and the study says so.
        if len(variations) < 2:
            left_out["too_few_variations"].append(concept.pk)
            continue
        if len(variations) > MAX_OPTIONS or len(rules) + 2 > MAX_QUESTIONS:
            left_out["too_many"].append(concept.pk)
            continue
        listed[concept.pk] = variations
        kept.append(concept)
        items.append(_concept_item(concept, variations, rules, rng))
    if not items:
        raise StudyConfigError(
            {"mining_job": "no chosen concept has 2 to 20 listed variations to ask about"}
        )
    return items + _checks(plan["n_checks"], kept, listed, rng), kept, left_out


def create_study(config: Mapping[str, Any], *, created_by=None) -> RuleValidationStudy:
    """Create the study and its campaign, all or nothing.

    ``config``: ``name`` (the campaign's, unique), ``rule_jobs`` (ids), the concepts as
    ``mining_job`` (its active concepts) or ``tgt_lang`` (every active concept of that target
    language), optional ``max_concepts`` sampled with ``seed``, ``overlap`` (3),
    ``attention_checks`` (2), ``native_speakers`` (true: only native speakers of the target
    language may join) and ``one_study_per_person`` (false; see :mod:`lexical.recruiting`).
    Raises :class:`StudyConfigError`.
    """
    if not isinstance(config, Mapping):
        raise StudyConfigError({"config": "must be a JSON object"})
    plan = _plan(config)
    items, kept, left_out = _items(plan)
    first = kept[0]
    with transaction.atomic():
        try:
            campaign = create_campaign(
                plan["name"],
                "questionnaire",
                items,
                src_lang=first.src_lang,
                tgt_lang=first.tgt_lang,
                overlap=plan["overlap"],
                shuffle_items=True,
                instructions=INSTRUCTIONS,
                created_by=created_by,
                **recruiting_settings(first.tgt_lang, **plan["recruiting"]),
            )
        except CampaignImportError as exc:
            raise StudyConfigError({"config": str(exc)}) from exc
        except ValidationError as exc:
            raise StudyConfigError({"config": "; ".join(exc.messages)}) from exc
        study = RuleValidationStudy.objects.create(
            campaign=campaign,
            mining_job=plan["mining_job"],
            src_lang=first.src_lang,
            tgt_lang=first.tgt_lang,
            params={
                "seed": plan["seed"],
                "max_concepts": plan["cap"],
                "overlap": plan["overlap"],
                "attention_checks": plan["n_checks"],
                "concepts": len(kept),
                "left_out": left_out,
                **plan["recruiting"],
            },
            created_by=created_by,
        )
        study.rule_jobs.set(plan["jobs"])
    return study


def apply_rule_verdicts(study: RuleValidationStudy) -> int:
    """Set each judged rule's ``validation_status`` from the majority of its counted
    annotators once it has ``overlap`` of them; a tie makes it ``unvalidated``, an incomplete
    item changes nothing. Idempotent; returns the number of rules changed."""
    judgments, _ = study_judgments(study)
    needed = study.campaign.overlap
    wanted: dict[int, str] = {}
    for concept in judgments:
        for rule in concept.rules:
            if len(rule.votes) < needed:
                continue  # not complete yet: whatever the rule says now stays
            verdict = results.rule_verdict(rule.votes, min_votes=needed)
            wanted[rule.rule_id] = verdict or Rule.Validation.UNVALIDATED
    changed = 0
    with transaction.atomic():
        current = Rule.objects.select_for_update().filter(pk__in=wanted)
        for rule_id, status in current.values_list("pk", "validation_status"):
            if status != wanted[rule_id]:
                changed += Rule.objects.filter(pk=rule_id).update(validation_status=wanted[rule_id])
    return changed


def on_item_completed(sender: Any, item: Any, **kwargs: Any) -> None:
    """``annotation.signals.item_completed``: a concept item of a study reached its overlap, so
    its rules get their verdicts now rather than when someone next opens the study page."""
    if item.origin != ORIGIN:
        return
    study = RuleValidationStudy.objects.filter(campaign_id=item.campaign_id).first()
    if study is not None:
        apply_rule_verdicts(study)
