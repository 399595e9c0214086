"""The questionnaire protocol: item validation, answers, submission, page, exports, round trip."""

from __future__ import annotations

import csv
import io
import json

import pytest

from annotation import exports, protocols
from annotation.models import Annotation, Item
from annotation.protocols import questionnaire as q
from annotation.refusals import CampaignImportError
from annotation.services.campaigns import create_campaign, import_campaign
from tests.annotation.campaign_builders import make_annotator, work
from tests.annotation.factories import enrolled

RULE_ITEM = {
    "doc_id": "art",
    "seg_id": "1",
    "src_lang": "en",
    "tgt_lang": "ja",
    "source": "art (noun): 美術, 芸術",
    "questions": [
        {"id": "missing", "family": "missing_variation", "type": "yes_no",
         "prompt": "Is any variation of “art” missing?"},
        {"id": "wrong", "family": "wrong_variation", "type": "multiple",
         "prompt": "Which listed variations do NOT mean “art”?", "options": ["美術", "芸術"],
         "lang": "ja"},
        {"id": "rule-1", "family": "rule_correct", "type": "yes_no",
         "prompt": "Is the rule for 美術 correct?"},
        {"id": "best", "type": "single", "prompt": "Which fits best?",
         "options": ["美術", "芸術", "アート"], "lang": "ja"},
    ],
}  # fmt: skip


def _item(**changes):
    item = json.loads(json.dumps(RULE_ITEM))
    item.update(changes)
    return item


def _questions(*edits):
    questions = json.loads(json.dumps(RULE_ITEM["questions"]))
    for index, change in edits:
        if change is None:
            questions[index] = None
        else:
            questions[index].update(change)
    return questions


# --- import validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        (None, "questions must be a non-empty list"),
        ([], "questions must be a non-empty list"),
        ({"id": "x"}, "questions must be a non-empty list"),
        (_questions((1, None)), "questions[2]: each question must be a JSON object"),
        (
            _questions((0, {"type": "slider"})),
            "questions[1] (id 'missing'): type must be one of yes_no, single, multiple, "
            "got 'slider'",
        ),
        (_questions((2, {"id": "missing"})), "questions: duplicate id 'missing'"),
        (
            _questions((1, {"options": ["美術", ""]})),
            "questions[2] (id 'wrong'): options must not be empty",
        ),
        (
            _questions((1, {"options": []})),
            "questions[2] (id 'wrong'): give 2 to 20 options, got 0",
        ),
        (
            _questions((3, {"options": ["a", "a"]})),
            "questions[4] (id 'best'): options must be distinct",
        ),
        (_questions((0, {"id": "bad id!"})), "questions[1]: id must be 1–64 letters"),
        (
            _questions((0, {"prompt": "  "})),
            "questions[1] (id 'missing'): prompt must be a non-empty string",
        ),
        (
            _questions((0, {"options": ["a", "b"]})),
            "questions[1] (id 'missing'): a yes_no question has no options",
        ),
        (
            _questions((3, {"none_label": "none"})),
            "questions[4] (id 'best'): only multiple questions have a none_label",
        ),
        (
            _questions((1, {"none_label": "美術"})),
            "questions[2] (id 'wrong'): none_label repeats an option",
        ),
        (_questions((0, {"colour": "red"})), "questions[1] (id 'missing'): unknown key(s): colour"),
        (
            _questions((0, {"lang": "<script>"})),
            "questions[1] (id 'missing'): lang must be a language tag",
        ),
        (
            _questions((3, {"family": "missing_variation"})),
            "questions: family 'missing_variation' mixes types yes_no and single",
        ),
        (
            [{"id": f"q{n}", "type": "yes_no", "prompt": "?"} for n in range(51)],
            "questions: at most 50 per item, got 51",
        ),
    ],
)
def test_hostile_questions_are_refused_with_the_question_named(questions, message):
    with pytest.raises(protocols.ItemError) as caught:
        protocols.normalize_item("questionnaire", _item(questions=questions))
    assert str(caught.value).startswith(message)


def test_normalized_questions_get_family_and_none_label_defaults():
    item = protocols.normalize_item("questionnaire", _item())
    missing, wrong, _rule, best = item["questions"]
    assert missing == {"id": "missing", "family": "missing_variation", "type": "yes_no",
                       "prompt": "Is any variation of “art” missing?"}  # fmt: skip
    assert wrong["none_label"] == q.DEFAULT_NONE_LABEL and wrong["lang"] == "ja"
    assert best["family"] == "best"


def test_other_protocols_refuse_questions():
    with pytest.raises(protocols.ItemError, match="questions are only for questionnaire"):
        protocols.normalize_item("choice", {"source": "s", "choices": ["a", "b"],
                                            "questions": RULE_ITEM["questions"]})  # fmt: skip


@pytest.mark.django_db
def test_import_reports_the_line_and_writes_nothing():
    good = json.dumps(RULE_ITEM, ensure_ascii=False)
    bad = json.dumps(_item(questions=_questions((2, {"type": "scale"}))), ensure_ascii=False)
    with pytest.raises(CampaignImportError) as caught:
        import_campaign(f"{good}\n{bad}\n", name="Q", protocol="questionnaire")
    assert caught.value.errors == [
        (2, "questions[3] (id 'rule-1'): type must be one of yes_no, single, multiple, "
            "got 'scale'")
    ]  # fmt: skip
    assert not Item.objects.exists()


def test_expected_answers_of_checks_are_validated():
    check = _item(kind="attention_check", expected={"answers": {"missing": "yes", "wrong": "none"}})
    assert protocols.normalize_item("questionnaire", check)["expected"] == {
        "answers": {"missing": "yes", "wrong": "none"}
    }
    for expected, message in [
        ({"answers": {"nope": "yes"}}, "expected.answers: no question with id 'nope'"),
        ({"answers": {"best": 7}}, "expected.answers['best']: option 7 does not exist"),
        ({"answers": {}}, "expected.answers needs at least one answer"),
        ("yes", "expected must be {'answers'"),
    ]:
        with pytest.raises(
            protocols.ItemError, match=message.replace("[", r"\[").replace("(", r"\(")
        ):
            protocols.normalize_item("questionnaire", _item(kind="tutorial", expected=expected))


# --- answers ---------------------------------------------------------------------------------


def _clean(answer):
    questions = protocols.normalize_item("questionnaire", _item())["questions"]
    context = protocols.AnswerContext(questions=tuple(questions))
    return protocols.get("questionnaire").clean(answer, context)


def test_a_complete_answer_is_normalized():
    cleaned, errors, missing = _clean(
        {"answers": {"missing": True, "wrong": [1, 1], "rule-1": "no", "best": 2.0}}
    )
    assert (errors, missing) == ([], [])
    assert cleaned == {"answers": {"missing": "yes", "wrong": [1], "rule-1": "no", "best": 2},
                       "comment": ""}  # fmt: skip


def test_every_question_must_be_answered():
    _cleaned, errors, missing = _clean({"answers": {"missing": "no", "wrong": []}})
    assert errors == []
    assert missing == [
        "answer question 2: Which listed variations do NOT mean “art”?",
        "answer question 3: Is the rule for 美術 correct?",
        "answer question 4: Which fits best?",
    ]


@pytest.mark.parametrize(
    ("answers", "error"),
    [
        ({"wrong": [0, "none"]}, "question 2 (wrong): choose options or “None of these”, not both"),
        ({"missing": "maybe"}, "question 1 (missing): answer yes or no"),
        ({"best": 3}, "question 4 (best): option 3 does not exist"),
        ({"best": True}, "question 4 (best): option True does not exist"),
        ({"wrong": [5]}, "question 2 (wrong): option 5 does not exist"),
        ({"wrong": "all"}, 'question 2 (wrong): give a list of option indices, or "none"'),
        ({"ghost": "yes"}, "no question with id 'ghost'"),
    ],
)
def test_invalid_answers_name_the_question(answers, error):
    _cleaned, errors, _missing = _clean({"answers": answers})
    assert errors == [error]


def test_a_flood_of_unknown_question_ids_is_one_error():
    _cleaned, errors, _missing = _clean({"answers": {f"x{n}": "yes" for n in range(10000)}})
    assert errors == ["no question with id 'x0' (and 9999 more)"]


def test_none_of_these_is_an_answer_of_its_own():
    cleaned, errors, _ = _clean({"answers": {"wrong": ["none"]}})
    assert errors == [] and cleaned["answers"]["wrong"] == "none"


# --- through the pages -----------------------------------------------------------------------


def _campaign(name="Rules", **settings):
    return create_campaign(name, "questionnaire", [RULE_ITEM], **settings)


@pytest.mark.django_db
def test_submit_names_the_bad_question_and_saves_nothing(client):
    campaign = _campaign()
    annotator = enrolled(campaign, "a")
    client.force_login(annotator.user)
    item_url = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
    bad = {"answers": {"missing": "yes", "wrong": [0, "none"], "rule-1": "no", "best": 0}}
    response = client.post(
        f"{item_url}submit/", {"answer": json.dumps(bad)}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 422
    assert response.json()["errors"] == [
        "question 2 (wrong): choose options or “None of these”, not both"
    ]
    incomplete = {"answers": {"missing": "yes"}}
    response = client.post(
        f"{item_url}submit/", {"answer": json.dumps(incomplete)}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 422
    assert (
        response.json()["missing"][0]
        == "answer question 2: Which listed variations do NOT mean “art”?"
    )
    assert Annotation.objects.get().status == "draft"


@pytest.mark.django_db
def test_page_renders_rtl_and_cjk_with_direction_and_language(client):
    item = _item(
        tgt_lang="fa",
        questions=[
            {"id": "fa", "type": "single", "prompt": "کدام واژه درست است؟",
             "options": ["هنر", "فن"], "lang": "fa"},
            {"id": "ja", "type": "multiple", "prompt": "どれが誤りですか？",
             "options": ["美術", "芸術"], "lang": "ja", "none_label": "どれでもない"},
        ],
    )  # fmt: skip
    campaign = create_campaign("RTL", "questionnaire", [item])
    annotator = enrolled(campaign, "a")
    client.force_login(annotator.user)
    page = client.get(client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"])
    html = page.content.decode()
    assert (
        '<legend dir="auto" lang="fa"><span class="muted">1.</span> کدام واژه درست است؟</legend>'
        in html
    )
    assert '<span dir="auto" lang="fa">هنر</span>' in html
    assert '<span dir="auto" lang="ja">芸術</span>' in html
    assert 'name="qm.ja" value="none" data-key="0" data-none="1"' in html
    assert "どれでもない" in html
    assert '"features": ["questionnaire"]' in html


@pytest.mark.django_db
def test_plain_form_post_without_javascript(client):
    campaign = _campaign()
    annotator = enrolled(campaign, "a")
    client.force_login(annotator.user)
    item_url = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
    form = {"q.missing": "no", "qm.wrong": ["0", "1"], "q.rule-1": "yes", "q.best": "1",
            "comment": "ok", "idempotency_key": "k1"}  # fmt: skip
    assert client.post(f"{item_url}submit/", form).status_code == 303
    assert Annotation.objects.get().answer == {
        "answers": {"missing": "no", "wrong": [0, 1], "rule-1": "yes", "best": 1},
        "comment": "ok",
    }


# --- exports and round trip ------------------------------------------------------------------

ANSWERS = {
    "a": {"missing": "no", "wrong": "none", "rule-1": "yes", "best": 1},
    "b": {"missing": "no", "wrong": [0], "rule-1": "yes", "best": 1},
    "c": {"missing": "yes", "wrong": "none", "rule-1": "no", "best": 0},
}


@pytest.mark.django_db
def test_exports_carry_answers_in_words_and_per_question_majorities():
    campaign = _campaign(overlap=3, qc_min_checks=0)
    for name, answers in ANSWERS.items():
        work(make_annotator(name), campaign, lambda item, a=answers: {"answers": a})
    rows = [json.loads(line) for line in exports.stream_export(campaign, "jsonl")]
    by_annotator = {row["annotator"]: row for row in rows}
    assert by_annotator["ann-a"]["answers"] == {
        "missing": "no", "wrong": ["None of these"], "rule-1": "yes", "best": "芸術",
    }  # fmt: skip
    assert by_annotator["ann-b"]["answer_values"]["wrong"] == [0]
    assert by_annotator["ann-b"]["answers"]["wrong"] == ["美術"]
    table = list(csv.DictReader(io.StringIO("".join(exports.stream_export(campaign, "csv")))))
    assert json.loads(table[0]["answers"])["best"] == "芸術"
    assert "answer_values" not in table[0]
    [aggregate] = [
        json.loads(line) for line in exports.stream_export(campaign, "jsonl", aggregate=True)
    ]
    assert aggregate["majority"] == {
        "missing": "no", "wrong": "None of these", "rule-1": "yes", "best": "芸術",
    }  # fmt: skip
    # Each question 2 of 3 agree: one agreeing pair of three.
    assert aggregate["question_agreement"] == {
        "missing": 0.333333, "wrong": 0.333333, "rule-1": 0.333333, "best": 0.333333,
    }  # fmt: skip
    assert aggregate["item_agreement"] == 0.333333 and aggregate["tie"] is False


@pytest.mark.django_db
def test_items_export_imports_back_to_the_same_items():
    check = _item(seg_id="2", kind="attention_check", expected={"answers": {"missing": "no"}})
    campaign = create_campaign("Round", "questionnaire", [RULE_ITEM, check])
    exported = "".join(exports.stream_export(campaign, exports.ITEMS_FORMAT))
    again = import_campaign(exported, name="Round 2", protocol="questionnaire")
    fields = ("source", "doc_id", "seg_id", "kind", "questions", "expected", "src_lang", "tgt_lang")
    first = list(campaign.items.order_by("position").values(*fields))
    second = list(again.items.order_by("position").values(*fields))
    assert first == second
    assert second[0]["questions"][1]["options"] == ["美術", "芸術"]
    assert "".join(exports.stream_export(again, exports.ITEMS_FORMAT)) == exported


@pytest.mark.django_db
def test_attention_check_passes_when_the_listed_answers_match():
    from annotation import qc

    check = _item(seg_id="2", kind="attention_check",
                  expected={"answers": {"missing": "no", "wrong": "none"}})  # fmt: skip
    campaign = create_campaign("QC", "questionnaire", [check], qc_min_checks=1)
    annotator = make_annotator("qc")
    work(annotator, campaign, lambda item: {"answers": ANSWERS["a"]})
    annotation = Annotation.objects.get(annotator=annotator)
    assert qc.check_result(annotation) is True
    annotation.answer = {"answers": ANSWERS["b"]}
    assert qc.check_result(annotation) is False
