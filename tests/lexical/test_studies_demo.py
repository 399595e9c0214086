"""The studies part of ``load_demo``: both seed 004 studies, answered by three simulated
annotators through annotation.services, once; their pages show real tables."""

from __future__ import annotations

from io import StringIO

import pytest

from annotation.models import Annotation, Annotator
from lexical import demo
from lexical.models import RuleValidationStudy, SelectionStudy
from lexical.studies import demo as studies_demo
from lexical.studies.selection_study.selectors import study_results

pytestmark = pytest.mark.django_db


def test_the_demo_studies_are_complete_with_simulated_annotators_once(admin_client):
    out = StringIO()
    demo.load_demo(out)
    demo.load_demo(out)
    assert out.getvalue().count("3 simulated annotators") == 2

    simulated = Annotator.objects.filter(pseudonym__startswith="sim-annotator-")
    assert sorted(a.pseudonym for a in simulated) == list(studies_demo.SIMULATED)
    assert all(a.display_name.startswith("SIMULATED") for a in simulated)
    assert not any(a.user.has_usable_password() for a in simulated)

    selection_study = SelectionStudy.objects.get(campaign__name=studies_demo.SELECTION_STUDY_NAME)
    rule_study = RuleValidationStudy.objects.get(campaign__name=studies_demo.RULE_STUDY_NAME)
    for campaign in (selection_study.campaign, rule_study.campaign):
        submitted = Annotation.objects.filter(item__campaign=campaign, status="submitted")
        assert submitted.count() == 3 * campaign.items.count()
        assert set(submitted.values_list("annotator__pseudonym", flat=True)) == set(
            studies_demo.SIMULATED
        )

    results = study_results(selection_study)
    table = results.table2
    assert table.complete == table.items > 0
    assert 0 < table.sufficient < table.items  # mostly attested, some disagreement
    assert table.ties == 0  # the demo concepts have two variations: no three-way split

    assert "Demo lexical selection" in admin_client.get("/lexical/selection-studies/").text
    assert "Demo rule validation" in admin_client.get("/lexical/rule-validation/").text
    page = admin_client.get(f"/lexical/selection-studies/{selection_study.pk}/")
    assert f"{table.sufficient_percent:.1f}" in page.text
    rule_page = admin_client.get(f"/lexical/rule-validation/{rule_study.pk}/")
    assert rule_page.status_code == 200


class _Item:
    """The fields of a served Item that the answer function reads."""

    kind = "regular"

    def __init__(self, ref: str, choices: list[str], attested: str):
        self.origin_ref, self.choices, self.meta = ref, choices, {"attested": attested}


def test_simulated_choices_split_three_ways_on_the_tie_item_and_mostly_agree_elsewhere():
    tie = _Item("7", ["a", "b", "c"], "a")
    picks = {studies_demo.selection_answer(n, tie, "7")["selected"][0] for n in range(3)}
    assert picks == {0, 1, 2}
    items = [_Item(str(k), ["a", "b"], "a") for k in range(100)]
    agreed = sum(
        studies_demo.selection_answer(n, item, "7")["selected"] == [0]
        for n in range(3)
        for item in items
    )
    assert 0.7 * 300 < agreed < 0.9 * 300
    again = [studies_demo.selection_answer(1, item, None) for item in items]
    assert again == [studies_demo.selection_answer(1, item, None) for item in items]
