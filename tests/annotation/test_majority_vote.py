"""Majority vote with tie rules (pure), and choice campaigns with a labelled confidence scale."""

from __future__ import annotations

import json

import pytest

from annotation import exports, protocols
from annotation.agreement import ATTESTED_WINS, NO_MAJORITY, Majority, majority_vote
from annotation.forms import CampaignForm
from annotation.models import Annotation, Campaign
from annotation.protocols.choice import confidence_scale
from annotation.services.campaigns import create_campaign
from tests.annotation.campaign_builders import make_annotator, work
from tests.annotation.factories import enrolled

# --- the pure vote ---------------------------------------------------------------------------


def test_a_clear_majority_ignores_the_tie_rule():
    for rule in (NO_MAJORITY, ATTESTED_WINS):
        assert majority_vote(["美術", "芸術", "美術"], tie_rule=rule, attested="芸術") == Majority(
            "美術", 2, 3
        )


def test_no_majority_rule_leaves_a_tie_undecided():
    vote = majority_vote(["a", "b", "c"], tie_rule=NO_MAJORITY, attested="a")
    assert (vote.label, vote.tie, vote.tie_broken, vote.display()) == (None, True, False, "tie")


def test_attested_wins_a_tie_it_is_part_of():
    vote = majority_vote(["a", "b", "c"], tie_rule=ATTESTED_WINS, attested="b")
    assert vote == Majority("b", 1, 3, tie=False, tie_broken=True)
    assert vote.display() == "b"
    two_two = majority_vote(["a", "b", "b", "a"], tie_rule=ATTESTED_WINS, attested="a")
    assert (two_two.label, two_two.votes, two_two.tie_broken) == ("a", 2, True)


def test_attested_outside_the_tie_or_unknown_does_not_win():
    # 2-2-1 with the attested option on 1 vote: still a tie.
    vote = majority_vote(["a", "a", "b", "b", "c"], tie_rule=ATTESTED_WINS, attested="c")
    assert vote.tie and vote.label is None
    assert majority_vote(["a", "b"], tie_rule=ATTESTED_WINS, attested=None).tie


def test_strict_majority_needs_more_than_half_even_for_the_attested():
    vote = majority_vote(["a", "b", "c"], tie_rule=ATTESTED_WINS, attested="a", strict=True)
    assert vote.tie and vote.label is None


def test_no_answers_and_unknown_rules():
    assert majority_vote([]) == Majority(None, 0, 0)
    with pytest.raises(ValueError, match="unknown tie rule 'coin_flip'"):
        majority_vote(["a"], tie_rule="coin_flip")


# --- confidence scale ------------------------------------------------------------------------

PAPER_SCALE = ["No idea", "Likely but uncertain", "Certain"]


def test_confidence_scale_default_and_labels():
    assert confidence_scale([]) == [(1, "1"), (2, "2"), (3, "3"), (4, "4"), (5, "5")]
    assert confidence_scale(PAPER_SCALE) == [
        (1, "No idea"), (2, "Likely but uncertain"), (3, "Certain")
    ]  # fmt: skip
    for bad, message in [
        (["only one"], "give 2 to 10 labels, got 1"),
        (["a", "a"], "must be distinct"),
        (["a", ""], "non-empty strings"),
        ("a,b", "non-empty strings"),
        ([str(n) for n in range(11)], "give 2 to 10 labels, got 11"),
    ]:
        with pytest.raises(ValueError, match=message):
            confidence_scale(bad)


def test_answers_use_the_campaign_scale():
    context = protocols.AnswerContext(n_choices=2, confidence_levels=3)
    choice = protocols.get("choice")
    assert choice.clean({"selected": [1], "confidence": 3}, context)[1] == []
    assert choice.clean({"selected": [1], "confidence": 4}, context)[1] == [
        "confidence must be 1 to 3"
    ]


def _lexical_items():
    return [
        {"seg_id": str(n), "source": f"The art of sentence {n}.", "src_lang": "en",
         "tgt_lang": "ja", "question": "Best translation of “art”?",
         "choices": ["美術", "芸術", "アート"], "meta": {"attested": "芸術"}}
        for n in (1, 2)
    ]  # fmt: skip


@pytest.mark.django_db
def test_campaign_confidence_labels_are_validated_on_the_model_and_the_form():
    with pytest.raises(Exception, match="confidence labels"):
        create_campaign("Bad scale", "choice", _lexical_items(), confidence_labels=["x"])
    assert not Campaign.objects.exists()
    campaign = create_campaign("Scale", "choice", _lexical_items())
    form = CampaignForm(instance=campaign)
    data = {
        name: form.initial.get(name) for name in form.fields if form.initial.get(name) is not None
    }
    data.update(confidence_labels="No idea\n\nCertain\n", tie_rule="attested_wins",
                shuffle_items="on", protocol="choice")  # fmt: skip
    form = CampaignForm(data, instance=campaign)
    assert form.is_valid(), form.errors
    form.save()
    campaign.refresh_from_db()
    assert (campaign.confidence_labels, campaign.tie_rule, campaign.shuffle_items) == (
        ["No idea", "Certain"], "attested_wins", True,
    )  # fmt: skip
    data["confidence_labels"] = "single"
    form = CampaignForm(data, instance=campaign)
    assert not form.is_valid() and "confidence_labels" in form.errors


@pytest.mark.django_db
def test_labelled_scale_on_the_page_and_in_the_export(client):
    campaign = create_campaign(
        "Lexical selection", "choice", _lexical_items(), confidence_labels=PAPER_SCALE,
        overlap=3, tie_rule="attested_wins",
    )  # fmt: skip
    annotator = enrolled(campaign, "a")
    client.force_login(annotator.user)
    item_url = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
    html = client.get(item_url).content.decode()
    assert '<span dir="auto">Likely but uncertain</span>' in html
    assert 'name="confidence" value="3"' in html and 'name="confidence" value="4"' not in html
    # Options are shown in the annotator's shuffled order, which is recorded per annotation.
    annotation = Annotation.objects.get()
    assert sorted(annotation.option_order) == [0, 1, 2]
    shown = [html.index(f'<span dir="auto">{label}</span>') for label in ["美術", "芸術", "アート"]]
    assert sorted(range(3), key=lambda i: shown[i]) == annotation.option_order
    response = client.post(
        f"{item_url}submit/",
        {"answer": json.dumps({"selected": [1], "confidence": 4})},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 422
    assert response.json()["errors"] == ["confidence must be 1 to 3"]


@pytest.mark.django_db
def test_majority_counts_qc_passing_annotators_and_applies_the_tie_rule():
    check = {**_lexical_items()[0], "seg_id": "check", "kind": "attention_check",
             "expected": "芸術", "meta": {}}  # fmt: skip
    campaign = create_campaign(
        "Majority", "choice", [*_lexical_items(), check], confidence_labels=PAPER_SCALE,
        overlap=4, tie_rule="attested_wins", qc_min_checks=1, qc_min_seconds_per_item=0,
    )  # fmt: skip
    # Item 1: 美術, 芸術, アート from those who pass → a three-way tie the attested 芸術 wins;
    # w, who fails the attention check, also picked 美術 and must not make it a majority.
    # Item 2: 美術, 美術, 芸術 → 美術.
    picks = {"w": [0, 2, 0], "x": [0, 0, 1], "y": [1, 0, 1], "z": [2, 1, 1]}

    def answer(chosen):
        def pick(item):
            index = 2 if item.kind == "attention_check" else int(item.seg_id) - 1
            return {"selected": [chosen[index]], "confidence": 2}

        return pick

    for name, chosen in picks.items():
        work(make_annotator(name), campaign, answer(chosen))
    rows = {
        r["seg_id"]: r
        for r in map(json.loads, exports.stream_export(campaign, "jsonl", aggregate=True))
    }
    assert rows["1"]["excluded"] == {"ann-w": "fail"}
    assert (rows["1"]["majority"], rows["1"]["tie"], rows["1"]["majority_votes"]) == (
        "芸術",
        False,
        1,
    )
    assert (rows["1"]["tie_broken"], rows["2"]["tie_broken"]) == (True, False)
    assert rows["2"]["majority"] == "美術" and rows["2"]["majority_votes"] == 2
    per_annotation = [json.loads(line) for line in exports.stream_export(campaign, "jsonl")]
    assert {r["confidence_label"] for r in per_annotation} == {"Likely but uncertain"}

    campaign.tie_rule = "no_majority"
    campaign.save()
    rows = {
        r["seg_id"]: r
        for r in map(json.loads, exports.stream_export(campaign, "jsonl", aggregate=True))
    }
    assert (rows["1"]["majority"], rows["1"]["tie"]) == ("tie", True)
    assert "tie_broken" not in rows["1"]
