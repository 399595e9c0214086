"""A small study world: the rule tests' mining job (concepts "date" with 2 variations and
"trip" with 3), two finished rule jobs ("gpt", "gemma") with a rule per variation, and answer
builders that read each served item's questions."""

from __future__ import annotations

from collections.abc import Callable

from annotation.models import Item
from lexical.models import MiningJob, Rule, RuleJob
from lexical.studies.rule_validation.services import create_study
from tests.lexical.rule_helpers import make_mining_job

GENERATORS = ("gemma", "gpt")


def make_rule_job(job: MiningJob, engine: str) -> RuleJob:
    rule_job = RuleJob.objects.create(
        source=RuleJob.Source.MINING_JOB, mining_job=job, engine=engine, status="finished"
    )
    for concept in job.concepts.all():
        for variation in concept.variations.all():
            Rule.objects.create(
                job=rule_job,
                concept=concept,
                variation=variation,
                generator=engine,
                text=f"Use {variation.lemma} when the context fits (job {rule_job.pk}).",
            )
    return rule_job


def make_world() -> tuple[MiningJob, list[RuleJob]]:
    job = make_mining_job()
    return job, [make_rule_job(job, engine) for engine in GENERATORS]


def make_study(name: str = "RV es", **config):
    job, rule_jobs = make_world()
    base = {"name": name, "mining_job": job.pk, "rule_jobs": [j.pk for j in rule_jobs]}
    return create_study(base | config)


AnswerRule = Callable[[Item, str], str]


def answers_for(
    *,
    missing: str = "no",
    wrong: Callable[[Item], object] = lambda item: "none",
    rule: AnswerRule = lambda item, qid: "yes",
    pass_checks: bool = True,
) -> Callable[[Item], dict]:
    """An ``answer_for`` for ``campaign_builders.work``: checks answered right (or wrong),
    concept items as the callables say."""

    def answer(item: Item) -> dict:
        if item.kind == Item.Kind.ATTENTION_CHECK:
            expected = item.expected["answers"]["precision"]
            marked = expected if pass_checks else "none"
            return {"answers": {"recall": "no", "precision": marked}}
        given: dict[str, object] = {"recall": missing, "precision": wrong(item)}
        for qid in item.meta["rules"]:
            given[qid] = rule(item, qid)
        return {"answers": given}

    return answer
