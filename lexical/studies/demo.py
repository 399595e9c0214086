"""Demo data for seed 004's two human studies (part of ``load_demo``; idempotent): a
rule-validation study of the demo mining job and a lexical-selection study of the demo
selection, each answered by three SIMULATED annotators (pseudonyms ``sim-annotator-N``).

Their answers come from a small seeded function and are submitted through
``annotation.services`` (the path a real submission takes), so the study pages show real
tables: mostly the attested variation, some disagreement, and a three-way tie on the first
sentence whose concept has three variations (the synthetic demo corpus plants two per concept,
so there the tables show no tie).
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import Annotator, Campaign, Item
from annotation.services.claims import next_item_for
from annotation.services.enrollment import admit
from annotation.services.submissions import start_viewing, submit_annotation
from lexical.models import ExampleSelection, MiningJob, RuleJob
from lexical.studies.rule_validation.services import create_study
from lexical.studies.selection_study.services import StudyParams, create_selection_study

RULE_STUDY_NAME = "Demo rule validation (simulated annotators)"
SELECTION_STUDY_NAME = "Demo lexical selection (simulated annotators)"
SIMULATED = ("sim-annotator-1", "sim-annotator-2", "sim-annotator-3")
# Seconds between two simulated submissions: above the campaigns' too-fast threshold.
SECONDS_PER_ITEM = 20.0


def simulated_annotator(pseudonym: str, native_language: str) -> Annotator:
    """A login-less annotator whose names say it is simulated."""
    existing = Annotator.objects.filter(pseudonym=pseudonym).first()
    if existing is not None:
        return existing
    user = get_user_model().objects.create_user(username=pseudonym, password=None)
    return Annotator.objects.create(
        user=user,
        pseudonym=pseudonym,
        display_name=f"SIMULATED {pseudonym}",
        native_language=native_language,
        working_languages=["en"],
    )


def selection_answer(annotator: int, item: Item, tie_ref: str | None) -> dict[str, Any]:
    """A choice: an attention check answered as asked; the ``tie_ref`` item split three ways;
    otherwise the attested variation, except for one seeded choice in five."""
    choices = list(item.choices)
    if item.kind == Item.Kind.ATTENTION_CHECK:
        wanted = (item.expected or {})["selected"][0]
    elif item.origin_ref == tie_ref:
        wanted = choices[annotator % len(choices)]
    else:
        rng = random.Random(f"{annotator}:{item.origin_ref}")
        attested = item.meta.get("attested")
        others = [c for c in choices if c != attested]
        wanted = attested if rng.random() < 0.8 or not others else rng.choice(others)
    return {"selected": [choices.index(wanted)], "confidence": 2 + annotator % 2}


def rule_answer(annotator: int, item: Item) -> dict[str, Any]:
    """Questionnaire answers: checks answered right; most listed words kept and most rules
    judged correct, with seeded exceptions."""
    if item.kind == Item.Kind.ATTENTION_CHECK:
        expected = (item.expected or {})["answers"]["precision"]
        return {"answers": {"recall": "no", "precision": expected}}
    rng = random.Random(f"{annotator}:{item.origin_ref}")
    n_options = len(item.meta.get("variation_ids", []))
    wrong: Any = [rng.randrange(n_options)] if n_options and rng.random() < 0.2 else "none"
    given: dict[str, Any] = {"recall": "yes" if rng.random() < 0.15 else "no", "precision": wrong}
    for qid in item.meta.get("rules", {}):
        given[qid] = "yes" if rng.random() < 0.8 else "no"
    return {"answers": given}


def _work(annotator: Annotator, campaign: Campaign, answer) -> int:
    """Admit, then take and submit every item the campaign serves this annotator."""
    admit(annotator, campaign)
    now = timezone.now()
    done = 0
    while (item := next_item_for(annotator, campaign, now=now)) is not None:
        start_viewing(annotator, item, now=now)
        now += timedelta(seconds=SECONDS_PER_ITEM)
        submit_annotation(annotator, item, answer(item), now=now)
        done += 1
    return done


def _first_three_way(campaign: Campaign) -> str | None:
    """The regular item that the three simulated annotators split on (one with 3+ options)."""
    for item in campaign.items.filter(kind=Item.Kind.REGULAR).order_by("pk"):
        if len(item.choices) >= len(SIMULATED):
            return item.origin_ref
    return None


def load(stdout, job: MiningJob, selection: ExampleSelection) -> None:
    annotators = [simulated_annotator(p, selection.tgt_lang) for p in SIMULATED]
    if not Campaign.objects.filter(name=RULE_STUDY_NAME).exists():
        rule_jobs = RuleJob.objects.filter(mining_job=job, status="finished").order_by("pk")
        study = create_study(
            {"name": RULE_STUDY_NAME, "mining_job": job.pk, "rule_jobs": [j.pk for j in rule_jobs]}
        )
        for n, annotator in enumerate(annotators):
            _work(annotator, study.campaign, lambda item, n=n: rule_answer(n, item))
        stdout.write(f"lexical: rule-validation study {RULE_STUDY_NAME!r}, 3 simulated annotators")
    if not Campaign.objects.filter(name=SELECTION_STUDY_NAME).exists():
        selection_study = create_selection_study(
            selection, StudyParams(name=SELECTION_STUDY_NAME, attention_checks=1)
        )
        tie = _first_three_way(selection_study.campaign)
        for n, annotator in enumerate(annotators):
            _work(
                annotator,
                selection_study.campaign,
                lambda item, n=n: selection_answer(n, item, tie),
            )
        stdout.write(f"lexical: selection study {SELECTION_STUDY_NAME!r}, 3 simulated annotators")
