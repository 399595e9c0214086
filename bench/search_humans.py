"""Humans in the topic search (issue 42): which texts to check, on seed 000's world with a crowd.

The world: ``SyntheticWorld`` gives each text (topic, draw) its human difficulty (what a crowd of
ESA annotators would say, their own noise included). QE misjudges it by a gap, human − QE =
``gap_mean`` + a per-topic blind spot (sd ``topic_gap_sd``) + per-text noise (sd
``text_gap_sd``), every deviate a pure function of the seed.

The search is the platform's default method (EB-UCB from 30k topics) at one pull per topic,
on QE. Then humans check texts in rounds, as for a run waiting for its outstanding human scores:
each round the rule picks texts of the finished search, the crowd answers, and the answers
replace QE in the bandit (the human loop's ``replace`` mode), until the rule picks nothing.
Every rule starts from the same finished search, so all see the same texts and answers and
differ only by what they check (checking during the search would also change which texts are
drawn, and the top-10 of two such searches differ for that reason alone).

Rules: ``all`` (every text human-checked: the reference top-k), ``uniform`` (every text of the
current top-k topics: the human loop's ``top_k`` rule without a per-topic limit), ``top_k``
(the platform's default: at most ``per_topic`` = 2 texts per top-k topic), ``boundary``
(``search.bandit.boundary``, ``per_topic`` = 1: one text of each of at most k topics a check
could move across the top-k boundary) and ``qe`` (no humans). Reported per rule, mean ± s.e.
over seeds: precision@10 of its top-10 against ``all``'s and ``uniform``'s, human pulls, and
pulls as a share of ``uniform``'s on the same seed (ratios in one run), and the true mean
difficulty of its top-10 against the oracle's.

    .venv/bin/python bench/search_humans.py              # 30k topics, 12 seeds: minutes
    .venv/bin/python bench/search_humans.py --seeds 1    # smoke

Writes bench/results/search_humans.{json,md}.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.search_quality import draw_ids  # noqa: E402
from engines.offline.synthetic_world import SyntheticWorld  # noqa: E402
from search.bandit import Policy, make_policy, policy_from_dict  # noqa: E402
from search.bandit.boundary import topics_to_check  # noqa: E402

RESULTS = ROOT / "bench" / "results"
K = 10
ROUNDS = 100  # the platform's default batch: 1 % of the budget (search.runs.config)
RULES = ("all", "uniform", "top_k", "boundary", "qe")
PER_TOPIC = 2  # HUMAN_DEFAULTS["per_topic"]
# The boundary rule's texts per in-play topic a round: one, so that every answer sharpens the
# gap before the next text of the topic is spent (two: 0.384 of uniform's pulls on seeds 0-3,
# one: 0.362, the same precision).
BOUNDARY_PER_TOPIC = 1


@dataclass(frozen=True)
class CrowdWorld:
    """Human and QE difficulty of every text of a synthetic world."""

    n_topics: int
    seed: int
    text_sd: float = 15.0
    gap_mean: float = -3.0
    topic_gap_sd: float = 4.0
    text_gap_sd: float = 6.0

    @cached_property
    def humans(self) -> SyntheticWorld:
        return SyntheticWorld(self.n_topics, seed=self.seed, noise_sd=self.text_sd)

    @cached_property
    def _deviates(self) -> SyntheticWorld:
        """Another world whose text deviates (its means taken off) give the per-text gap."""
        return SyntheticWorld(self.n_topics, seed=self.seed + 7919, noise_sd=1.0)

    @cached_property
    def _blind_spot(self) -> np.ndarray:
        return self.topic_gap_sd * np.random.default_rng([self.seed, 42]).normal(size=self.n_topics)

    def human(self, topics: np.ndarray, draws: np.ndarray) -> np.ndarray:
        return self.humans.difficulty_of(topics, draws)

    def qe(self, topics: np.ndarray, draws: np.ndarray) -> np.ndarray:
        deviate = self._deviates.difficulty_of(topics, draws) - self._deviates.true_means[topics]
        gap = self.gap_mean + self._blind_spot[topics] + self.text_gap_sd * deviate
        return self.human(topics, draws) - gap


@dataclass
class Outcome:
    world: str
    seed: int
    rule: str
    top: list[int]
    human_pulls: int
    true_value: float
    oracle: float


class Log:
    """Every pull of a run: its topic, QE and human difficulty, and whether humans saw it."""

    def __init__(self) -> None:
        self.unchecked: defaultdict[int, list[int]] = defaultdict(list)
        self.topics: list[int] = []
        self.qe: list[float] = []
        self.human: list[float] = []
        self.checked = 0

    def add(self, topics: np.ndarray, qe: np.ndarray, human: np.ndarray) -> None:
        for topic, q, h in zip(topics.tolist(), qe.tolist(), human.tolist(), strict=True):
            self.unchecked[topic].append(len(self.topics))
            self.topics.append(topic)
            self.qe.append(q)
            self.human.append(h)

    def take(self, topic: int, count: int) -> list[int]:
        taken, self.unchecked[topic] = self.unchecked[topic][:count], self.unchecked[topic][count:]
        return taken


def choose(rule: str, policy: Policy, log: Log, judged: list[int]) -> list[int]:
    """The pulls ``rule`` sends to humans this round (indices into the log)."""
    if rule == "uniform":
        return [i for t in policy.top_k().tolist() for i in log.take(t, len(log.topics))]
    if rule == "top_k":
        sent = np.bincount(np.array([log.topics[i] for i in judged], dtype=np.int64),
                           minlength=policy.n_topics)  # fmt: skip
        return [i for t in policy.top_k().tolist() for i in log.take(t, PER_TOPIC - sent[t])]
    if rule == "boundary":
        pairs = np.array(judged, dtype=np.int64)
        topics = np.array(log.topics)[pairs] if judged else np.empty(0, dtype=np.int64)
        order = topics_to_check(policy, topics, topics, np.array(log.qe)[pairs] if judged
                                else np.empty(0), np.array(log.human)[pairs] if judged
                                else np.empty(0))[: policy.k]  # fmt: skip
        return [i for t in order.tolist() for i in log.take(t, BOUNDARY_PER_TOPIC)]
    return []


def qe_search(crowd: CrowdWorld, budget_per_topic: float, seed: int) -> tuple[Policy, Log]:
    """The platform's default search on QE alone, and the log of its texts."""
    n = crowd.n_topics
    budget = round(budget_per_topic * n)
    policy = make_policy("default", n, K, np.random.default_rng(1000 + seed), budget=budget)
    drawn = np.zeros(n, dtype=np.int64)
    log = Log()
    while not policy.done:
        topics = policy.select(max(10, budget // ROUNDS))
        if topics.shape[0] == 0:
            break
        draws = draw_ids(topics, drawn)
        qe = crowd.qe(topics, draws)
        policy.update(topics, qe)
        log.add(topics, qe, crowd.human(topics, draws))
    return policy, log


def check(policy: Policy, log: Log, rule: str) -> int:
    """Rounds of human checks by ``rule`` until it sends nothing; the human pulls spent."""
    judged: list[int] = []
    while True:
        sent = list(range(len(log.topics))) if rule == "all" and not judged else []
        sent = sent or choose(rule, policy, log, judged)
        if not sent:
            return len(judged)
        idx = np.array(sent)
        policy.revise(np.array(log.topics)[idx], np.array(log.qe)[idx],
                      np.array(log.human)[idx])  # fmt: skip
        judged.extend(sent)


def outcomes_of(crowd: CrowdWorld, budget_per_topic: float, seed: int) -> list[Outcome]:
    """Every rule on the same finished search: the same texts, the same crowd answers."""
    searched, searched_log = qe_search(crowd, budget_per_topic, seed)
    state = searched.to_dict()
    truth = crowd.humans
    oracle = truth.value_of(truth.oracle_top_k(K))
    outcomes = []
    for rule in RULES:
        policy, log = policy_from_dict(state), copy.deepcopy(searched_log)
        pulls = check(policy, log, rule)
        top = policy.top_k()
        outcomes.append(Outcome(f"{crowd.n_topics}", seed, rule, top.tolist(), pulls,
                                truth.value_of(top), oracle))  # fmt: skip
    return outcomes


def _precision(outcome: Outcome, other: Outcome) -> float:
    return len(set(outcome.top) & set(other.top)) / K


def _mean_se(values: list[float]) -> tuple[float, float]:
    array = np.array(values, dtype=np.float64)
    se = float(array.std(ddof=1) / np.sqrt(array.shape[0])) if array.shape[0] > 1 else 0.0
    return float(array.mean()), se


def summarise(outcomes: list[Outcome]) -> list[dict]:
    """Per world and rule, mean ± s.e. over seeds; precision and pulls paired by seed."""
    by = {(o.world, o.seed, o.rule): o for o in outcomes}
    rows = []
    for world in sorted({o.world for o in outcomes}, key=int):
        for rule in RULES:
            mine = [o for o in outcomes if o.world == world and o.rule == rule]
            if not mine:
                continue
            every = [by[(world, o.seed, "all")] for o in mine]
            uniform = [by[(world, o.seed, "uniform")] for o in mine]
            metrics = {
                "precision_vs_all": [_precision(o, a) for o, a in zip(mine, every, strict=True)],
                "precision_vs_uniform": [
                    _precision(o, u) for o, u in zip(mine, uniform, strict=True)
                ],
                "human_pulls": [o.human_pulls for o in mine],
                "share_of_uniform": [
                    o.human_pulls / max(u.human_pulls, 1)
                    for o, u in zip(mine, uniform, strict=True)
                ],
                "true_top10": [o.true_value for o in mine],
            }
            row = {"world": world, "rule": rule, "seeds": len(mine), "oracle": mine[0].oracle}
            for name, values in metrics.items():
                row[name], row[name + "_se"] = _mean_se(values)
            rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    header = ["topics", "rule", "precision@10 vs all", "vs uniform", "human pulls",
              "pulls / uniform", "true top-10 (oracle)"]  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append(
            f"| {int(r['world']):,} | {r['rule']} "
            f"| {r['precision_vs_all']:.3f} ± {r['precision_vs_all_se']:.3f} "
            f"| {r['precision_vs_uniform']:.3f} ± {r['precision_vs_uniform_se']:.3f} "
            f"| {r['human_pulls']:.0f} "
            f"| {r['share_of_uniform']:.3f} ± {r['share_of_uniform_se']:.3f} "
            f"| {r['true_top10']:.2f} ({r['oracle']:.2f}) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--sizes", type=int, nargs="*", default=[30_000])
    parser.add_argument("--budget", type=float, default=1.0, help="pulls per topic")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    sizes = args.sizes
    start = time.perf_counter()
    outcomes = [
        outcome
        for n in sizes
        for seed in range(args.seeds)
        for outcome in outcomes_of(CrowdWorld(n, seed), args.budget, seed)
    ]
    elapsed = time.perf_counter() - start
    rows = summarise(outcomes)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "search_humans"
    report = {"k": K, "budget_per_topic": args.budget, "seeds": args.seeds,
              "world": asdict(CrowdWorld(1, 0)), "elapsed_seconds": elapsed,
              "summary": rows, "runs": [asdict(o) for o in outcomes]}  # fmt: skip
    (args.out / f"{stem}.json").write_text(json.dumps(report, indent=1))
    text = markdown(rows) + f"\n\nElapsed: {elapsed:.0f} s\n"
    (args.out / f"{stem}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
