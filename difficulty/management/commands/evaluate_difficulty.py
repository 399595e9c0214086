import json

from django.core.management.base import BaseCommand, CommandError

from core.command_io import check_succeeded
from core.commands import named
from difficulty.models import DifficultyDataset
from difficulty.services import (
    DifficultyDatasetError,
    run_difficulty_evaluation,
    start_difficulty_evaluation,
)

GROUP_ORDER = ("Oracle", "Heuristic", "Dataset metric", "LLM judge", "Crowd based", "Random")


def _num(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _pct(value) -> str:
    return "–" if value is None else f"{value:.1f}%"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        # Names left-aligned, numbers right-aligned, as in the paper's tables.
        return "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def format_results(results: dict) -> str:
    """Seed 002 Table 1 (DEC by estimator, per language pair) and the Table 9 subset table."""
    dataset = results["dataset"]
    settings = results["settings"]
    details = results["details"]
    pairs = list(dataset["language_pairs"])
    order = sorted(
        results["estimators"],
        key=lambda name: GROUP_ORDER.index(details[name]["group"]),
    )
    out = [
        f"Difficulty estimation correlation (DEC, seed 002 Eq. 1) on {dataset['name']!r}: "
        f"{dataset['n_segments']} segments, {len(pairs)} language pair(s), systems per pair: "
        + ", ".join(f"{p} {len(dataset['language_pairs'][p]['systems'])}" for p in pairs)
        + ("" if dataset["references_included"] else " (human references left out)"),
        "",
    ]
    clusters = results.get("significance") or {}
    ranked = clusters.get("order", [])
    if ranked:  # seed 002 Table 7: by DEC, with each estimator's cluster
        order = [*ranked, *(name for name in order if name not in ranked)]
    header = ["Group", "Estimator", "DEC", f"{round(settings['confidence'] * 100)}% CI", "Pearson"]
    rows = []
    for name in order:
        result = results["estimators"][name]
        ci = details[name]["dec_ci"]
        ci_text = "–" if not ci or ci[0] is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
        rows.append(
            [details[name]["group"], name, _num(result["dec"]), ci_text, _num(result["pearson"])]
            + [_num(result["dec_per_lp"].get(p)) for p in pairs]
            + ([str(result.get("rank") or "–")] if ranked else [])
        )
    out += _table(header + pairs + (["Rank"] if ranked else []), rows)
    if ranked:
        out.append(
            f"Rank: clusters of significance ({clusters['method']} test of every two estimators, "
            f"up to {clusters['n_resamples']} resamples, alpha {clusters['alpha']}; seed 002 "
            "Table 7)."
        )
    elif clusters.get("skipped"):
        out.append(f"Note: {clusters['skipped']}.")
    fraction = settings["subset_fraction"]
    random_rows = results["random_selection"]
    full = dataset["full_set"]
    out += [
        "",
        f"Hardest {fraction:.0%} of segments per language pair (seed 002 §6, Eq. 3–4; "
        "lower = a harder subset)",
        "",
    ]
    low, high = random_rows["avg_score_interval"]
    interval = "" if low is None else f"  {random_rows['runs']} runs, 99% t interval"
    subset_rows = [
        ["Full set", "", _num(full["avg_score"], 2), _pct(full["pct_perfect"])],
        [
            "Random selection",
            "",
            _num(random_rows["avg_score"], 2),
            _pct(random_rows["pct_perfect"]),
        ],
    ]
    subset_rows += [
        [
            details[name]["group"],
            name,
            _num(results["estimators"][name]["avg_score"], 2),
            _pct(results["estimators"][name]["pct_perfect"]),
        ]
        for name in order
    ]
    out += _table(["Method", "Estimator", "AvgScore", "%Perfect"], subset_rows)
    if interval:
        out.append(
            f"Random selection:{interval}: AvgScore {low:.2f}–{high:.2f}, %Perfect "
            f"{random_rows['pct_perfect_interval'][0]:.1f}–"
            f"{random_rows['pct_perfect_interval'][1]:.1f}%"
        )
    undefined = {name: details[name]["undefined"] for name in order if details[name]["undefined"]}
    for name, cells in undefined.items():
        listed = ", ".join(f"{lp}/{system}" for lp, system in cells[:5])
        more = f" and {len(cells) - 5} more" if len(cells) > 5 else ""
        out.append(f"Note: {name}: tau_b undefined (constant scores) for {listed}{more}; left out.")
    return "\n".join(out)


class Command(BaseCommand):
    help = (
        "Compare difficulty estimators on a dataset with DEC (seed 002 Eq. 1) and hardest-subset "
        "AvgScore / %Perfect, in the foreground. The evaluation is kept and shows in the UI."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        parser.add_argument(
            "--estimator",
            action="append",
            required=True,
            help="Repeatable: length, chars, rarity, random, syntax, oracle-src, oracle-src-lang, "
            "llm-judge:<engine>, crowd:<engine>, learned:<engine>, metric:<field> "
            "(metric:-<field> negates).",
        )
        parser.add_argument("--subset", type=float, default=0.25, help="Fraction per pair.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--bootstrap", type=int, default=1000, help="Resamples for the DEC CI (0: none)."
        )
        parser.add_argument(
            "--include-references",
            action="store_true",
            help="Also evaluate against the human reference systems.",
        )
        parser.add_argument("--json", action="store_true", help="Print the results as JSON.")

    def handle(self, *args, **options):
        dataset = named(DifficultyDataset, options["dataset"], "difficulty dataset")
        try:
            evaluation = start_difficulty_evaluation(
                dataset,
                options["estimator"],
                subset_fraction=options["subset"],
                seed=options["seed"],
                n_bootstrap=options["bootstrap"],
                include_references=options["include_references"],
                enqueue=False,
            )
            evaluation = run_difficulty_evaluation(evaluation.pk)
        except DifficultyDatasetError as exc:
            raise CommandError(str(exc)) from exc
        check_succeeded(evaluation, f"evaluation {evaluation.pk}")
        if options["json"]:
            self.stdout.write(json.dumps(evaluation.results, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(format_results(evaluation.results))
            self.stdout.write(f"\n(evaluation {evaluation.pk}, kept for comparison)")
