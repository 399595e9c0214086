"""An MT-breaker comparison as a discrimination subject: each method's texts against all of them,
with seed 001 Table 4's model gaps, from several targets or from a transfer."""

from __future__ import annotations

import pytest

from ranking.subsets import services
from ranking.subsets.inputs import breaker_subject
from search.breaker.demo import FRAGILE, FRAGILE_B
from search.breaker.services import run_in_foreground, start_breaker_comparison
from search.models import BreakerChain, BreakerTransfer, TransferResult
from tests.search.breaker_helpers import offline_config

pytestmark = pytest.mark.django_db


def _comparison(name: str, targets: list[str]) -> list:
    config = {**offline_config(n_steps=2), "name": name, "targets": targets,
              "methods": ["seeds", "breaker_seeded"]}  # fmt: skip
    runs = start_breaker_comparison(config, enqueue=False)
    return [run_in_foreground(run.pk) for run in runs]


def test_several_targets_give_each_method_its_point_and_its_row_of_gaps():
    runs = _comparison("Multi", [FRAGILE, FRAGILE_B])

    analysis = services.start_analysis(
        subject_kind="breaker", comparison="Multi", test="permutation", n_resamples=99,
        n_random=3, enqueue=False,
    )  # fmt: skip
    analysis = services.run_in_foreground(analysis.pk)

    assert analysis.status == "done" and analysis.score == "qe"
    result = analysis.result
    assert [s["label"] for s in result["subsets"]] == ["Seeds", "MT-breaker (seeded)"]
    assert [s["points"][0]["size"] for s in result["subsets"]] == [6, 6]
    gaps = result["gaps"]
    assert sorted(gaps["systems"]) == sorted([FRAGILE, FRAGILE_B])
    seeds_row = gaps["rows"][0]
    chains = BreakerChain.objects.filter(run=runs[0]).exclude(selected_text="")
    expected = []
    for system in gaps["systems"]:
        values = []
        for chain in chains:
            step = chain.steps.get(index=chain.selected_step)
            values.append(sum(step.qe[system].values()) / len(step.qe[system]))
        expected.append(sum(values) / len(values))
    assert seeds_row["means"] == pytest.approx(expected)
    assert seeds_row["gaps"] == pytest.approx([expected[0] - expected[1]])


def test_one_target_is_refused_until_a_transfer_scores_other_translators():
    runs = _comparison("Single", [FRAGILE])

    with pytest.raises(services.AnalysisError) as refused:
        services.start_analysis(subject_kind="breaker", comparison="Single")
    assert f"into cs for 1 translator ({FRAGILE})" in refused.value.errors["comparison"]
    assert "a transfer of the comparison's texts" in refused.value.errors["comparison"]

    transfer = BreakerTransfer.objects.create(name="t", translators=["other-mt"],
                                              languages=["cs"], qe_engines=["q"])  # fmt: skip
    chains = list(
        BreakerChain.objects.filter(run__in=runs)
        .exclude(selected_text="")
        .order_by("run_id", "index")
    )
    TransferResult.objects.bulk_create(
        TransferResult(
            transfer=transfer,
            chain=chain,
            translator="other-mt",
            tgt_lang="cs",
            source=chain.selected_text,
            quality=50.0 + k,
        )
        for k, chain in enumerate(chains)
    )
    TransferResult.objects.create(  # into another language: does not count
        transfer=transfer, chain=chains[0], translator="other-mt", tgt_lang="de", source="x",
        quality=1.0,
    )  # fmt: skip

    subject = breaker_subject("Single")

    assert subject.systems == sorted(["other-mt", FRAGILE])
    row = subject.systems.index("other-mt")
    assert list(subject.scores[row]) == [50.0 + k for k in range(len(chains))]


def test_unknown_and_unfinished_comparisons_are_refused():
    with pytest.raises(services.AnalysisError, match="no MT-breaker comparison named 'nope'"):
        services.start_analysis(subject_kind="breaker", comparison="nope")
    config = {**offline_config(n_steps=2), "name": "Busy", "methods": ["seeds"]}
    start_breaker_comparison(config, enqueue=False)
    with pytest.raises(services.AnalysisError, match=r"have not ended"):
        services.start_analysis(subject_kind="breaker", comparison="Busy")
    with pytest.raises(services.AnalysisError, match="'qe' or 'human'"):
        services.start_analysis(subject_kind="breaker", comparison="Busy", score="bleu")


def test_people_s_scores_of_the_selected_steps_are_the_human_subject():
    runs = _comparison("Judged", [FRAGILE, FRAGILE_B])
    chains = BreakerChain.objects.filter(run__in=runs).exclude(selected_text="")
    chains = list(chains.order_by("run_id", "index"))
    for k, chain in enumerate(chains):
        step = chain.steps.get(index=chain.selected_step)
        step.human = {FRAGILE: {"7": {"protocol": "esa", "score": 40 + k},
                                "8": {"protocol": "mqm", "score": 60 + k}},
                      FRAGILE_B: {"7": {"protocol": "esa", "score": "n/a"}}}  # fmt: skip
        step.save()

    with pytest.raises(services.AnalysisError, match=r"for 1 translator"):
        services.start_analysis(subject_kind="breaker", comparison="Judged", score="human")
    for chain in chains:
        step = chain.steps.get(index=chain.selected_step)
        step.human[FRAGILE_B] = {"7": {"protocol": "esa", "score": 30.0}}
        step.save()
    subject = breaker_subject("Judged", score="human")

    assert subject.systems == sorted([FRAGILE, FRAGILE_B])
    row = subject.systems.index(FRAGILE)
    assert list(subject.scores[row]) == [50.0 + k for k in range(len(chains))]  # campaigns' mean
    with pytest.raises(services.AnalysisError, match="not 'de'"):
        services.start_analysis(subject_kind="breaker", comparison="Judged", score="human",
                                language_pair="de")  # fmt: skip
