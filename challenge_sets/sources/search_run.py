"""Items from a search run: the hardest texts of its top-k topics, or pulls chosen by id."""

from __future__ import annotations

from typing import Any

from challenge_sets.sources.base import Candidate, Field, ItemSource, SourceError, int_param
from engines.models import Engine
from engines.registry import scores_on_0_100
from search.models import Pull, SearchRun
from search.runs import records
from search.runs.selectors import pulls_of_arm, top_topics

ORIGIN = "search_run"


def engine_snapshot(engine: Engine | None) -> dict[str, Any] | None:
    if engine is None:
        return None
    return {"name": engine.name, "kind": engine.kind, "model": engine.model,
            "params": engine.params}  # fmt: skip


def _engines_of(run: SearchRun) -> dict[str, Any]:
    difficulty = run.difficulty_engine
    members = {}
    # An artificial crowd names its translators and quality estimators: snapshot them too.
    for role in ("translators", "quality_estimators"):
        names = difficulty.params.get(role) or []
        members[role] = [
            engine_snapshot(e) for e in Engine.objects.filter(name__in=names).order_by("name")
        ]
    return {
        "difficulty": engine_snapshot(difficulty),
        "sampler": engine_snapshot(run.sampler_engine),
        **members,
    }


def run_snapshot(run: SearchRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "name": run.name,
        "status": run.status,
        "config": {
            "tree": run.tree.name if run.tree is not None else None,
            "sampler": run.sampler,
            "algorithm": run.algorithm,
            "params": run.params,
            "budget_pulls": run.budget_pulls,
            "k": run.k,
            "seed": run.seed,
            "batch_size": run.batch_size,
            "human_mode": run.human_mode,
            "src_lang": run.src_lang,
            "tgt_lang": run.tgt_lang,
        },
        "engines": _engines_of(run),
        "difficulty_on_0_100": scores_on_0_100(run.difficulty_engine),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


def pull_candidate(run: SearchRun, snapshot: dict[str, Any], pull: Pull, rank=None) -> Candidate:
    record = records.pull_record(run, pull)
    detail = pull.sample.origin_detail if pull.sample is not None else {}
    # A set's automatic difficulty is on 0–100 (table, chart, manifest); a heuristic's score
    # only ranks the run's texts, so it stays in the provenance (pull record) alone.
    on_scale = snapshot["difficulty_on_0_100"]
    return Candidate(
        source=pull.text,
        src_lang=run.src_lang,
        tgt_lang=run.tgt_lang,
        origin=ORIGIN,
        origin_ref=f"run:{run.pk}:pull:{pull.pk}",
        translations=dict(pull.translations),
        automatic_difficulty=pull.automatic_difficulty if on_scale else None,
        provenance={
            "kind": ORIGIN,
            "run": snapshot,
            "pull": record,
            "topic_path": record["topic"],
            "topic_rank": rank,
            "source_url": record["source_url"],
            "prompt_version": detail.get("prompt_version", ""),
            "sample_origin": detail,
            "automatic_scores": record["scores"],
        },
    )


class SearchRunSource(ItemSource):
    name = ORIGIN
    label = "Search run"
    fields = (
        Field("run", "Search run", "choice"),
        Field("top_k", "Top topics", "int", required=False, default=3,
              help="Take the hardest texts of the run's best topics…"),
        Field("per_topic", "Texts per topic", "int", required=False, default=3),
        Field("pulls", "…or these pull ids", "text", required=False,
              help="Comma-separated pull ids; when given, top topics are ignored."),
    )  # fmt: skip

    def choices(self, field_name: str) -> list[tuple[str, str]]:
        runs = SearchRun.objects.filter(pulls_done__gt=0).order_by("-created_at")[:200]
        return [(str(r.pk), f"#{r.pk} {r.name} ({r.status})") for r in runs]

    def candidates(self, params: dict[str, Any]) -> list[Candidate]:
        run = (
            SearchRun.objects.select_related("tree", "difficulty_engine", "sampler_engine")
            .filter(pk=int_param(params, "run", high=2**62))
            .first()
        )
        if run is None:
            raise SourceError("no such search run")
        snapshot = run_snapshot(run)
        wanted = str(params.get("pulls") or "").replace(" ", "")
        if wanted:
            ids = [int(p) for p in wanted.split(",") if p.isdigit()]
            if len(ids) != len(wanted.split(",")):
                raise SourceError("pulls must be comma-separated pull ids")
            pulls = {
                p.pk: p
                for p in Pull.objects.filter(run=run, pk__in=ids).select_related("sample", "topic")
            }
            missing = [str(i) for i in ids if i not in pulls]
            if missing:
                raise SourceError(f"pulls not in run #{run.pk}: {', '.join(missing)}")
            return [pull_candidate(run, snapshot, pulls[i]) for i in ids]
        top_k = int_param(params, "top_k", high=1000) if params.get("top_k") else run.k
        per_topic = int_param(params, "per_topic", high=1000) if params.get("per_topic") else 3
        candidates = []
        for row in top_topics(run, limit=top_k):
            for pull in pulls_of_arm(run, row.arm, limit=per_topic):
                candidates.append(pull_candidate(run, snapshot, pull, rank=row.rank))
        if not candidates:
            raise SourceError(f"run #{run.pk} has no top topics with texts yet")
        return candidates
