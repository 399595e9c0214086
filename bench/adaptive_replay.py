"""Replay allocation policies on real multi-system human evaluations (issue 42).

Datasets (read directly from ``$HARDSET_SHARED_DATA`` or ``../shared/data``; nothing is copied):

* ``wmt24-en-cs``: WMT24 ESA en-cs (``wmt24_esa_en-cs.jsonl``), 15 MT systems (``refA`` left out)
  × 297 paragraphs; a cell reveals one of its recorded annotations (``annotations``);
* ``wmt24-en-cs-cells``: the same with one score a cell (``scores``), as the platform imports
  the file and ``manage.py replay_allocation`` replays it;
* ``wmt22-zh-en-mqm``: the mt-metrics-eval sample's ``human-scores/zh-en.mqm.seg.score``
  (−MQM, higher is better), the 14 systems that MQM scored (references left out) × the
  segments every one of them has a score on;
* ``wmt23-en-de-sxs``: Google's side-by-side MQM archive, three raters a cell; each rater's penalty
  mapped to 0–100 as the platform's importer does (``annotation.scoring.mqm_to_100``, ADR 0004),
  ``HOTW-test`` rows are checks and not scored; a cell reveals one rater's score.

Policies: ``uniform`` (random cells balanced over systems), ``uniform_segments`` (whole segments
in random order, WMT's design), ``pearmut`` (Pearmut's dynamic assignment) and ``settle`` (ours,
goal ``top``, the default) plus ``settle`` with goal ``full``. Measures per policy, means over seeds
(``ranking.replay.summarise``): the budget from which the full-data top cluster stays recovered,
the budget from which Kendall tau stays >= 0.9, the stopping rule's budget, and ratios against
``uniform``, ``uniform_segments`` and ``pearmut`` on the same seeds.

    .venv/bin/python bench/adaptive_replay.py --seeds 100           # minutes on 2 cores
    .venv/bin/python bench/adaptive_replay.py --datasets wmt24-en-cs --seeds 10
    .venv/bin/python bench/adaptive_replay.py --datasets synthetic-15x600 --seeds 100  # speed

With ``--prior chrf`` the policies also see an automatic score of every cell: sentence chrF
(``sacrebleu``) of the system's output against the reference that ships with the data (WMT24
``ref``, the mt-metrics-eval ``refA``), the kind of metric prior a campaign takes from its
items' ``meta``. Only ``settle`` uses one (the cold start's order, the segments a pair is judged
on); every decision still rests on the human scores. The SxS and synthetic data have no
reference, so no prior.

Writes bench/results/adaptive_replay.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tarfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"
DATA = Path(os.environ.get("HARDSET_SHARED_DATA") or ROOT.parent / "shared" / "data")

from annotation.formats import google_mqm  # noqa: E402
from annotation.scoring import mqm_to_100  # noqa: E402
from ranking import replay as rp  # noqa: E402
from ranking.allocation import StoppingRule, make_policy  # noqa: E402

POLICIES = [
    ("uniform", {}),
    ("uniform_segments", {}),
    ("pearmut", {}),
    ("settle", {}),
    ("settle", {"goal": "full"}),
    ("settle", {"prior_tilt": 0.0}),  # with --prior: the prior orders the cold start only
]


def _chrf(hypotheses: list[str | None], reference: list[str | None]) -> list[float]:
    """Sentence chrF (0–100) a cell, NaN where the output or the reference is missing."""
    from sacrebleu.metrics import CHRF

    metric = CHRF()
    return [
        np.nan if h is None or r is None else metric.sentence_score(h, [r]).score
        for h, r in zip(hypotheses, reference, strict=True)
    ]


def load_wmt24(path: Path, *, per_rater: bool = True, prior: bool = False) -> rp.ReplayData:
    """One recorded annotation a judgment; with ``per_rater=False`` the cell's ``scores`` value
    (the mean of its annotations), as ``import_difficulty_dataset`` stores it and ``manage.py
    replay_allocation`` replays it: 14 of en-cs's 4,455 cells have two or three annotations."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    systems = sorted({s for r in rows for s in r["scores"]} - {"refA"})
    metric = None
    if prior:
        refs = [r.get("ref") for r in rows]
        metric = np.array([_chrf([r["tgt"].get(s) for r in rows], refs) for s in systems])
    if not per_rater:
        cells = [[np.nan if r["scores"].get(s) is None else r["scores"][s] for r in rows]
                 for s in systems]  # fmt: skip
        return rp.ReplayData(np.array(cells, dtype=np.float64), systems, prior=metric)
    raters = max(len(a) for r in rows for a in r["annotations"].values())
    cube = np.full((len(systems), len(rows), raters), np.nan)
    for g, row in enumerate(rows):
        for s, name in enumerate(systems):
            for k, (_, score) in enumerate(row["annotations"].get(name) or []):
                if score is not None:
                    cube[s, g, k] = float(score)
    return rp.ReplayData(cube, systems, prior=metric)


def load_mtme(folder: Path, *, prior: bool = False) -> rp.ReplayData:
    per_system: dict[str, list[float | None]] = defaultdict(list)
    for line in (folder / "human-scores" / "zh-en.mqm.seg.score").read_text().splitlines():
        name, value = line.split("\t")
        per_system[name].append(None if value == "None" else float(value))
    references = {p.name.split(".")[1] for p in (folder / "references").glob("zh-en.*.txt")}
    systems = sorted(
        s for s, v in per_system.items() if s not in references and any(x is not None for x in v)
    )
    matrix = np.array([[np.nan if x is None else x for x in per_system[s]] for s in systems])
    crossed = ~np.isnan(matrix).any(axis=0)  # fully crossed: every system scored
    metric = None
    if prior:
        outputs = folder / "system-outputs" / "zh-en"
        ref = (folder / "references" / "zh-en.refA.txt").read_text(encoding="utf-8").splitlines()
        metric = np.array([
            _chrf((outputs / f"{s}.txt").read_text(encoding="utf-8").splitlines(), ref)
            for s in systems
        ])[:, crossed]  # fmt: skip
    return rp.ReplayData(matrix[:, crossed], systems, prior=metric)


def load_sxs(archive: Path) -> rp.ReplayData:
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(".tsv"))
        handle = tar.extractfile(member)
        assert handle is not None
        segments = google_mqm.read_tsv(handle.read())
    cells: dict[tuple[str, str, str], list[float]] = {}
    for seg in segments:
        penalties = google_mqm.rater_penalties(seg)
        if penalties:
            cells[(seg.system, seg.doc, seg.seg_id)] = [
                mqm_to_100(p) for _, p in sorted(penalties.items())
            ]
    systems = sorted({k[0] for k in cells})
    keys = sorted({(k[1], k[2]) for k in cells})
    column = {k: i for i, k in enumerate(keys)}
    raters = max(len(v) for v in cells.values())
    cube = np.full((len(systems), len(keys), raters), np.nan)
    for (system, doc, seg_id), scores in cells.items():
        cube[systems.index(system), column[(doc, seg_id)], : len(scores)] = scores
    crossed = (~np.isnan(cube[:, :, 0])).all(axis=0)
    return rp.ReplayData(cube[:, crossed], systems)


def synthetic(n_systems: int = 15, n_segments: int = 600, seed: int = 42) -> rp.ReplayData:
    """The issue's speed shape: ``n_systems`` × ``n_segments``, one ESA-like score a cell (system
    quality in tiers, a segment effect and noise, clipped to 0–100)."""
    rng = np.random.default_rng(seed)
    quality = np.repeat(np.linspace(80, 60, 5), -(-n_systems // 5))[:n_systems]
    segment = rng.normal(0, 10, n_segments)
    scores = quality[:, None] + segment[None, :] + rng.normal(0, 15, (n_systems, n_segments))
    return rp.ReplayData(np.clip(scores, 0, 100), [f"sys{k:02d}" for k in range(n_systems)])


LOADERS = {
    "synthetic-15x600": synthetic,
    "wmt24-en-cs": lambda prior=False: load_wmt24(DATA / "wmt24_esa_en-cs.jsonl", prior=prior),
    "wmt24-en-cs-cells": lambda prior=False: load_wmt24(
        DATA / "wmt24_esa_en-cs.jsonl", per_rater=False, prior=prior
    ),
    "wmt22-zh-en-mqm": lambda prior=False: load_mtme(
        DATA / "ranking" / "wmt22-mtme-zhen", prior=prior
    ),
    "wmt23-en-de-sxs": lambda: load_sxs(
        DATA / "ranking" / "google-mqm-sxs-2023"
        / "sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv.tar.gz"
    ),
}  # fmt: skip

_WORK: dict[str, object] = {}


def _init(data: rp.ReplayData, reference: rp.Reference, budgets: np.ndarray, args: dict) -> None:
    _WORK.update(data=data, reference=reference, budgets=budgets, args=args)


def _run(job: tuple[str, dict, int]) -> rp.PolicyTrace:
    name, params, seed = job
    args = _WORK["args"]
    assert isinstance(args, dict)
    started = time.process_time()
    trace = rp.replay(
        _WORK["data"], make_policy(name, **params), seed, _WORK["reference"],  # type: ignore[arg-type]
        budgets=_WORK["budgets"], batch_size=args["batch"],  # type: ignore[arg-type]
        stopping=StoppingRule(goal="top", patience=3, n_resamples=args["resamples"]),
    )  # fmt: skip
    trace.policy = rp._label(name, params)
    trace.extra["cpu_s"] = time.process_time() - started
    return trace


def run_dataset(name: str, args: argparse.Namespace) -> dict:
    data = LOADERS[name](prior=True) if args.prior == "chrf" else LOADERS[name]()
    reference = rp.reference_ranking(data, n_resamples=args.reference_resamples)
    budgets = rp.checkpoint_budgets(data.total, args.checkpoints)
    seeds = list(range(args.seeds))
    policies = [(p, params) for p, params in POLICIES if rp._label(p, params) in args.policies]
    jobs = [(p, params, s) for p, params in policies for s in seeds]
    started = time.perf_counter()
    options = {"batch": args.batch, "resamples": args.resamples}
    with ProcessPoolExecutor(
        args.workers, initializer=_init, initargs=(data, reference, budgets, options)
    ) as pool:
        traces = list(pool.map(_run, jobs, chunksize=max(1, len(jobs) // (8 * args.workers))))
    seconds = time.perf_counter() - started
    summary = rp.summarise(traces)
    ranked = sorted(reference.top)
    return {
        "dataset": name,
        "systems": len(data.systems),
        "segments": int(data.judgments.shape[1]),
        "raters_per_cell": data.cap,
        "total_judgments": data.total,
        "full_top_cluster": [data.systems[i] for i in ranked],
        "full_clusters": reference.n_clusters,
        "seeds": args.seeds,
        "seconds": round(seconds, 1),
        "per_run_seconds": round(seconds * args.workers / len(jobs), 3),
        # CPU time of the runs themselves: what the wall time would be on dedicated cores.
        "cpu_seconds": round(sum(t.extra["cpu_s"] for t in traces), 1),
        "policies": summary,
    }


def _ratio(a: float, b: float) -> str:
    return "–" if not (np.isfinite(a) and np.isfinite(b) and b > 0) else f"{a / b:.2f}"


def _get(summary: dict, field: str) -> float:
    value = summary[field]
    return float("nan") if value is None else float(value)


def table(report: dict) -> str:
    lines = [
        "| dataset | policy | top cluster: budget (seeds) | / uniform | / uniform_segments "
        "| tau ≥ 0.9: budget (seeds) | / pearmut | / uniform_segments | stop: budget (right) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for result in report["datasets"]:
        pol = result["policies"]
        missing = {"top_budget": None, "tau_budget": None}  # a baseline left out: no ratio
        base = {k: pol.get(k, missing) for k in ("uniform", "uniform_segments", "pearmut")}
        total = result["total_judgments"]
        for name, s in pol.items():
            top = s["top_budget"] if s["top_budget"] is not None else float("nan")
            tau = s["tau_budget"] if s["tau_budget"] is not None else float("nan")
            stop = s["stop_budget"] if s["stop_budget"] is not None else float("nan")
            lines.append(
                f"| {result['dataset']} ({total}) | {name} | {top:.0f} ({s['top_reached']}) "
                f"| {_ratio(top, _get(base['uniform'], 'top_budget'))} "
                f"| {_ratio(top, _get(base['uniform_segments'], 'top_budget'))} "
                f"| {tau:.0f} ({s['tau_reached']}) "
                f"| {_ratio(tau, _get(base['pearmut'], 'tau_budget'))} "
                f"| {_ratio(tau, _get(base['uniform_segments'], 'tau_budget'))} "
                f"| {stop:.0f} ({s['stop_top_correct']}/{s['stopped']}) |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets", nargs="+", choices=sorted(LOADERS),
        default=[name for name in sorted(LOADERS) if not name.startswith("synthetic")],
    )  # fmt: skip
    parser.add_argument("--seeds", type=int, default=100)
    labels = [rp._label(p, params) for p, params in POLICIES]
    parser.add_argument(
        "--policies", nargs="+", choices=labels,
        default=[label for label in labels if "prior" not in label],
    )  # fmt: skip
    parser.add_argument("--checkpoints", type=int, default=40)
    parser.add_argument("--batch", type=int, default=15, help="Cells judged between decisions.")
    parser.add_argument(
        "--resamples", type=int, default=200, help="The stopping rule's test, per check."
    )
    parser.add_argument(
        "--reference-resamples", type=int, default=1000,
        help="The reference's test, whose draws every checkpoint reuses.",
    )  # fmt: skip
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--prior", choices=["none", "chrf"], default="none",
        help="An automatic score of every cell for the policies (wmt24 and zh-en data only).",
    )  # fmt: skip
    parser.add_argument("--output", default="adaptive_replay.json", help="File in bench/results.")
    args = parser.parse_args()
    report = {"args": vars(args), "datasets": []}
    for name in args.datasets:
        result = run_dataset(name, args)
        report["datasets"].append(result)
        print(
            f"{name}: {result['seconds']} s wall, {result['cpu_seconds']} s CPU "
            f"({args.workers} workers), top cluster {result['full_top_cluster']}",
            flush=True,
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / args.output).write_text(json.dumps(report, indent=2))
    print(table(report))


if __name__ == "__main__":
    main()
