"""Replay allocation policies on a difficulty dataset already in the database (issue 42)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.commands import named
from difficulty.models import DifficultyDataset
from ranking import allocation
from ranking.inputs import InputError, dataset_judgments
from ranking.replay import (
    ReplayData,
    policy_specs,
    replay_many,
    summarise,
    top_cluster_stability,
)

MAX_SEEDS = 1000


class Command(BaseCommand):
    help = (
        "Replay annotation allocation policies on a fully crossed difficulty dataset: each "
        "annotation reveals one recorded score; print, per policy, the budget at which the "
        "full-data top cluster is recovered, at which Kendall tau reaches the threshold, and "
        "at which the stopping rule fired."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, help="Difficulty dataset name.")
        parser.add_argument("--lp", default="", help="Language pair (needed with several).")
        parser.add_argument(
            "--score", default="", help="human (default), raw or z (one rater a judgment)."
        )
        parser.add_argument(
            "--policy", action="append", choices=sorted(allocation.POLICIES),
            help="Policy to replay (repeat; default: all).",
        )  # fmt: skip
        parser.add_argument("--goal", choices=allocation.GOALS, default="top")
        parser.add_argument("--seeds", type=int, default=10)
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--checkpoints", type=int, default=40)
        parser.add_argument("--batch", type=int, default=15, help="Cells judged at once.")
        parser.add_argument("--resamples", type=int, default=200)
        parser.add_argument("--tau", type=float, default=0.9, help="Kendall tau threshold.")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args, **options) -> None:
        dataset = named(DifficultyDataset, options["dataset"], "difficulty dataset")
        if not 1 <= options["seeds"] <= MAX_SEEDS:
            raise CommandError(f"--seeds must be between 1 and {MAX_SEEDS}")
        if not 0 < options["alpha"] < 1 or not 1 <= options["checkpoints"] <= 1000:
            raise CommandError("--alpha must be in (0, 1) and --checkpoints in 1..1000")
        if not 1 <= options["batch"] <= 10_000 or not 1 <= options["resamples"] <= 100_000:
            raise CommandError("--batch must be in 1..10000 and --resamples in 1..100000")
        try:
            scored, cube = dataset_judgments(dataset, options["lp"], options["score"])
            data = ReplayData(cube, scored.systems)
        except (InputError, ValueError) as exc:
            raise CommandError(f"cannot replay: {exc}") from None
        names = options["policy"] or list(allocation.POLICIES)
        specs = policy_specs(names, options["goal"])
        reference, traces = replay_many(
            data, specs, list(range(options["seeds"])), goal=options["goal"],
            alpha=options["alpha"], n_checkpoints=options["checkpoints"],
            batch_size=options["batch"], n_resamples=options["resamples"],
        )  # fmt: skip
        summary = summarise(traces, tau_threshold=options["tau"])
        top = [data.systems[i] for i in sorted(reference.top)]
        stability = top_cluster_stability(data, reference, alpha=options["alpha"])
        if options["format"] == "json":
            report = {
                "input": scored.description, "systems": data.systems,
                "segments": int(cube.shape[1]), "judgments": data.total,
                "full_top_cluster": top, "full_clusters": reference.n_clusters,
                "top_cluster_stability": stability, "policies": summary,
            }  # fmt: skip
            self.stdout.write(json.dumps(report, indent=2, allow_nan=False))
            return
        self._table(scored.description, data, top, stability, summary, options)

    def _table(self, description, data, top, stability, summary, options) -> None:
        self.stdout.write(
            f"{description}: {len(data.systems)} systems x {data.judgments.shape[1]} segments, "
            f"{data.total} recorded scores; full-data top cluster: {', '.join(top)} (the same "
            f"in {stability:.0%} of bootstrap resamples of the segments)"
        )
        self.stdout.write(
            f"{'policy':<24}{'top cluster at':>16}{'tau>=' + str(options['tau']) + ' at':>16}"
            f"{'stopped at':>14}{'stop right':>12}"
        )
        for name, s in summary.items():
            cells = [
                _budget(s["top_budget"], s["top_reached"], s["seeds"]),
                _budget(s["tau_budget"], s["tau_reached"], s["seeds"]),
                _budget(s["stop_budget"], s["stopped"], s["seeds"]),
                f"{s['stop_top_correct']}/{s['stopped']}",
            ]
            self.stdout.write(f"{name:<24}{cells[0]:>16}{cells[1]:>16}{cells[2]:>14}{cells[3]:>12}")


def _budget(value: float | None, reached: int, seeds: int) -> str:
    return "never" if value is None else f"{value:.0f} ({reached}/{seeds})"
