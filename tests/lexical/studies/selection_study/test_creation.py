"""Creating a selection study: the item contract of LEXICAL_STUDIES.md, the campaign settings,
attention checks, what is skipped and what is refused (nothing written then)."""

from __future__ import annotations

import pytest

from annotation import ordering
from annotation.agreement import ATTESTED_WINS, NO_MAJORITY
from annotation.models import Annotation, Assignment, Campaign, Enrollment, Item
from lexical.models import ExampleSelection, SelectionStudy, Variation
from lexical.studies.selection_study import services
from lexical.studies.selection_study.services import DEFAULT_CONFIDENCE_LABELS, SelectionStudyError
from tests.annotation.campaign_builders import make_annotator, work
from tests.lexical.studies.selection_study.helpers import make_study, make_study_selection

pytestmark = pytest.mark.django_db


def test_the_campaign_follows_the_contract_settings():
    study = make_study()
    campaign = study.campaign
    assert campaign.protocol == "choice"
    assert (campaign.overlap, campaign.multi_select, campaign.ask_confidence) == (3, False, True)
    assert campaign.tie_rule == NO_MAJORITY
    assert campaign.shuffle_items is True
    assert (campaign.src_lang, campaign.tgt_lang) == ("en", "fa")
    assert campaign.confidence_labels == list(DEFAULT_CONFIDENCE_LABELS)
    assert "No idea" in campaign.confidence_labels
    assert "Likely but uncertain" in campaign.confidence_labels
    assert "highlighted word" in campaign.instructions
    assert study.params == {
        "items": 5,
        "attention_checks": 0,
        "skipped_concepts": [],
        "skipped_examples": 0,
        "native_speakers": True,
        "one_study_per_person": False,
    }


def test_each_item_is_the_contract_dict():
    study = make_study()
    items = list(study.campaign.items.order_by("position"))
    assert [i.kind for i in items] == ["regular"] * 5
    first = items[0]
    example_id = int(first.origin_ref)
    concept_id = first.meta["concept_id"]
    assert first.doc_id == f"concept-{concept_id}"
    assert first.seg_id == f"example-{example_id}"
    assert (first.src_lang, first.tgt_lang) == ("en", "fa")
    assert first.source == "We ate a fresh date from the tree."
    assert first.target == ""
    assert '"date"' in first.question
    # Canonical order: most frequent first.
    assert first.choices == ["khorma", "rotab", "kharak"]
    assert first.origin == "lexical_selection"
    assert first.meta == {
        "concept_id": concept_id,
        "concept": "date",
        "pos": "NOUN",
        "attested": "rotab",
        "target_text": "<rotab> translation",
        "source_highlight": [15, 19],
    }
    assert first.source[15:19] == "date"
    trip = items[3]
    assert trip.choices == ["safar", "gasht"]
    assert trip.meta["source_highlight"] is None
    assert trip.meta["attested"] == "safar"


def test_choices_use_the_dtails_label_and_leave_dropped_variations_out():
    selection = make_study_selection()
    Variation.objects.filter(lemma="khorma").update(surface_forms=["khorma", "khormaha"])
    Variation.objects.filter(lemma="kharak").update(dropped=True)
    study = make_study(selection)
    date_items = study.campaign.items.filter(meta__concept="date").order_by("position")
    assert [i.choices for i in date_items] == [["khorma/khormaha", "rotab"]] * 2
    assert [i.meta["attested"] for i in date_items] == ["rotab", "khorma/khormaha"]
    # The example attested with the dropped variation cannot be asked: it is skipped.
    assert study.params["skipped_examples"] == 1
    assert study.params["items"] == 4


def test_a_concept_with_under_two_variations_left_is_skipped_and_counted():
    selection = make_study_selection()
    Variation.objects.filter(lemma="gasht").update(dropped=True)
    study = make_study(selection)
    assert not study.campaign.items.filter(meta__concept="trip").exists()
    skipped = study.params["skipped_concepts"]
    assert [(s["lemma"], s["variations"]) for s in skipped] == [("trip", 1)]
    assert study.params["items"] == 3


def test_settings_are_taken_from_the_params():
    study = make_study(
        overlap=5,
        tie_rule=ATTESTED_WINS,
        confidence_labels=("guess", "fairly sure", "sure"),
        instructions="Pick one.",
    )
    campaign = study.campaign
    assert (campaign.overlap, campaign.tie_rule) == (5, ATTESTED_WINS)
    assert campaign.confidence_labels == ["guess", "fairly sure", "sure"]
    assert campaign.instructions == "Pick one."


def test_attention_checks_are_instructed_response_items_with_a_known_answer():
    study = make_study(attention_checks=7)  # more checks than sentences: sentences reused
    checks = list(study.campaign.items.filter(kind=Item.Kind.ATTENTION_CHECK))
    assert len(checks) == 7 and study.params["attention_checks"] == 7
    for check in checks:
        wanted = check.expected["selected"]
        assert len(wanted) == 1 and wanted[0] in check.choices
        assert f'select "{wanted[0]}"' in check.question
        assert "attested" not in check.meta and "target_text" not in check.meta
        assert check.origin == "lexical_selection_check"
    # Checks are not study items: results read only the regular ones.
    assert study.campaign.items.filter(kind="regular").count() == 5
    # Reproducible from the selection seed and the study name.
    plan = services.study_items(study.selection)
    draw = services._check_items(plan, 3, study.selection, "same name")
    assert draw == services._check_items(plan, 3, study.selection, "same name")


def _count() -> tuple[int, int, int]:
    return Campaign.objects.count(), Item.objects.count(), SelectionStudy.objects.count()


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"name": "  "}, "name", "name"),
        ({"overlap": 0}, "overlap", "1 to 100"),
        ({"tie_rule": "coin"}, "tie_rule", "tie rule"),
        ({"confidence_labels": ("only one",)}, "confidence_labels", "2 to 10"),
        ({"confidence_labels": ("same", "same")}, "confidence_labels", "distinct"),
        ({"attention_checks": 21}, "attention_checks", "0 to 20"),
    ],
)
def test_bad_settings_are_refused_by_field_and_write_nothing(params, field, message):
    selection = make_study_selection()
    before = _count()
    with pytest.raises(SelectionStudyError, match=message) as caught:
        make_study(selection, **params)
    assert caught.value.field == field
    assert _count() == before


def test_an_empty_selection_is_refused():
    empty = ExampleSelection.objects.create(name="Empty", src_lang="en", tgt_lang="fa", seed=1)
    with pytest.raises(SelectionStudyError, match="no examples") as caught:
        make_study(empty)
    assert caught.value.field == "selection"
    assert _count() == (0, 0, 0)


def test_a_selection_with_nothing_to_choose_between_is_refused():
    selection = make_study_selection()
    Variation.objects.filter(lemma__in=["gasht", "rotab", "kharak"]).update(dropped=True)
    with pytest.raises(SelectionStudyError, match="2 concept"):
        make_study(selection)
    assert _count() == (0, 0, 0)


def test_a_duplicate_name_is_refused():
    selection = make_study_selection()
    make_study(selection, name="Farsi")
    before = _count()
    with pytest.raises(SelectionStudyError, match="already exists") as caught:
        make_study(selection, name="Farsi")
    assert caught.value.field == "name"
    assert _count() == before


def test_each_annotator_gets_a_shuffled_item_and_option_order_that_is_recorded():
    study = make_study(attention_checks=1)
    campaign = study.campaign
    campaign.qc_min_seconds_per_item = 0
    campaign.save()
    items = list(campaign.items.values_list("id", "position"))
    for name in ("a", "b", "c"):
        annotator = make_annotator(f"order-{name}")
        assert work(annotator, campaign, lambda item: {"selected": [0], "confidence": 2}) == 6
        seed = Enrollment.objects.get(annotator=annotator, campaign=campaign).item_order_seed
        assert seed is not None
        claimed = list(
            Assignment.objects.filter(annotator=annotator)
            .order_by("claimed_at", "id")
            .values_list("item_id", flat=True)
        )
        assert claimed == ordering.ordered(items, seed)
        for annotation in Annotation.objects.filter(annotator=annotator).select_related("item"):
            assert sorted(annotation.option_order) == list(range(len(annotation.item.choices)))
