"""The DTAiLS page, API and management commands."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from lexical.dtails import exports
from lexical.models import Concept, ExampleSelection
from tests.lexical.dtails.study_helpers import finished_study

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[3] / "lexical" / "dtails" / "examples"
CSV = (EXAMPLES / "expert_dataset.csv").read_bytes()
WORDS = (EXAMPLES / "gl.words").read_bytes()
HEADER = b"concept,source language text,target language text,variations,label\n"
BAD_LINE_4 = HEADER + CSV.split(b"\n", 1)[1].replace(b",mi\xc3\xb1a/mi\xc3\xb1as\n", b",nope\n", 1)


def upload(data: bytes, name: str = "expert_dataset.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="text/csv")


# --- page ------------------------------------------------------------------------------------


def test_page_renders_with_columns_examples_and_exports(admin_client):
    selection = ExampleSelection.objects.create(
        name="mined es", src_lang="en", tgt_lang="es", seed=1
    )
    campaign = finished_study()
    html = admin_client.get(reverse("lexical:dtails")).content.decode()
    assert "<code>source language text</code>" in html
    assert reverse("lexical:dtails_example", args=["expert_dataset.csv"]) in html
    assert reverse("lexical:dtails_selection_csv", args=[selection.pk]) in html
    assert reverse("lexical:dtails_study_csv", args=[campaign.pk]) in html
    assert reverse("lexical:dtails_study_extended_csv", args=[campaign.pk]) in html
    assert reverse("lexical:dtails") in admin_client.get(reverse("lexical:home")).content.decode()


def test_example_files_download_and_import_cleanly(admin_client):
    response = admin_client.get(reverse("lexical:dtails_example", args=["expert_dataset.csv"]))
    assert response.status_code == 200 and response.content == CSV
    assert admin_client.get(reverse("lexical:dtails_example", args=["gl.words"])).content == WORDS
    assert admin_client.get(reverse("lexical:dtails_example", args=["x.csv"])).status_code == 404


def test_page_upload_imports_and_redirects(admin_client):
    response = admin_client.post(
        reverse("lexical:dtails"),
        {"name": "gl expert", "src_lang": "en", "tgt_lang": "gl", "csv_file": upload(CSV),
         "words_file": upload(WORDS, "gl.words")},
    )  # fmt: skip
    selection = ExampleSelection.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("lexical:selection_detail", args=[selection.pk])
    assert Concept.objects.get(lemma="my").pos == "PRON"
    download = admin_client.get(reverse("lexical:dtails_selection_csv", args=[selection.pk]))
    assert download.content == CSV and "attachment" in download["Content-Disposition"]


def test_page_upload_error_names_the_line_and_writes_nothing(admin_client):
    response = admin_client.post(
        reverse("lexical:dtails"),
        {"name": "bad", "src_lang": "en", "tgt_lang": "gl", "csv_file": upload(BAD_LINE_4)},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "line 4: label &#x27;nope&#x27; is not one of the variations" in html
    assert "Nothing was written." in html
    assert not ExampleSelection.objects.exists() and not Concept.objects.exists()


def test_pages_are_staff_only(client, annotator_client):
    for url in (reverse("lexical:dtails"), reverse("lexical:dtails_example", args=["gl.words"])):
        assert client.get(url).status_code == 302
        assert annotator_client.get(url).status_code == 302


# --- API -------------------------------------------------------------------------------------


def test_api_import_then_export(admin_client):
    response = admin_client.post(
        reverse("lexical-dtails-list"),
        {"name": "api gl", "tgt_lang": "gl", "csv_file": upload(CSV),
         "words_file": upload(WORDS, "gl.words")},
    )  # fmt: skip
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["name"], body["rows"], body["concepts"]) == ("api gl", 8, 3)
    csv = admin_client.get(reverse("lexical-dtails-selection", args=[body["selection"]]))
    assert csv.status_code == 200 and csv.content == CSV


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"csv_file": BAD_LINE_4}, "csv_file", "line 4: label 'nope' is not one of"),
        ({"csv_file": b"concept,label\n"}, "csv_file", "line 1: the header must be"),
        ({"csv_file": HEADER + b"a,s\xfe,t,\"['x', 'y']\",x\n"}, "csv_file", "byte 0xfe"),
        ({"words_file": b"my,PRON\n"}, "words_file", "line 1: expected concept,POS"),
        ({"tgt_lang": "??"}, "tgt_lang", "not a language code"),
        ({"csv_file": None}, "csv_file", "No file was submitted"),
    ],
)
def test_api_upload_errors_are_400_naming_the_line(admin_client, fields, field, message):
    data = {"name": "x", "src_lang": "en", "tgt_lang": "gl", "csv_file": CSV, **fields}
    for key in ("csv_file", "words_file"):
        if data.get(key) is None:
            data.pop(key, None)
        elif key in data:
            data[key] = upload(data[key], key)
    response = admin_client.post(reverse("lexical-dtails-list"), data)
    assert response.status_code == 400
    body = response.json()
    assert message in " ".join(body.get("errors", body)[field])
    assert not ExampleSelection.objects.exists() and not Concept.objects.exists()


REPEATED = CSV + CSV.splitlines(keepends=True)[-1]  # line 10 repeats line 9


def test_api_and_page_import_a_repeated_row_once_and_report_it(admin_client):
    data = {"name": "rep", "tgt_lang": "gl"}
    response = admin_client.post(
        reverse("lexical-dtails-list"), {**data, "csv_file": upload(REPEATED)}
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["rows"], body["repeated_rows"]) == (8, 1)
    assert body["report"] == ["1 row repeating an earlier row (line 10) imported once"]
    page = admin_client.post(
        reverse("lexical:dtails"),
        {**data, "name": "rep2", "src_lang": "en", "csv_file": upload(REPEATED)},
        follow=True,
    )
    assert ExampleSelection.objects.get(name="rep2").selected.count() == 8
    assert "1 row repeating an earlier row (line 10) imported once." in page.content.decode()


def test_api_and_page_keep_repeated_rows_when_asked(admin_client):
    data = {"name": "rep", "tgt_lang": "gl", "keep_duplicates": "true"}
    response = admin_client.post(
        reverse("lexical-dtails-list"), {**data, "csv_file": upload(REPEATED)}
    )
    assert response.status_code == 201 and response.json()["rows"] == 9
    assert response.json()["report"] == [
        "1 row repeating an earlier row (line 10) kept as a second example"
    ]
    page = admin_client.post(
        reverse("lexical:dtails"),
        {**data, "name": "rep2", "src_lang": "en", "keep_duplicates": "on",
         "csv_file": upload(REPEATED)},
    )  # fmt: skip
    assert page.status_code == 302
    assert ExampleSelection.objects.get(name="rep2").selected.count() == 9


def test_the_command_imports_a_repeated_row_once_and_reports_it(tmp_path):
    (tmp_path / "expert_dataset.csv").write_bytes(REPEATED)
    out = io.StringIO()
    call_command(
        "import_dtails", str(tmp_path / "expert_dataset.csv"), "--name", "gl", "--tgt-lang", "gl",
        stdout=out,
    )  # fmt: skip
    selection = ExampleSelection.objects.get(name="gl")
    assert out.getvalue().splitlines() == [
        f"Imported selection #{selection.pk} 'gl': 8 examples of 3 concepts.",
        "Note: 1 row repeating an earlier row (line 10) imported once.",
    ]


def test_api_reimport_into_the_same_name_is_refused(admin_client):
    url = reverse("lexical-dtails-list")
    data = {"name": "twice", "tgt_lang": "gl"}
    assert admin_client.post(url, {**data, "csv_file": upload(CSV)}).status_code == 201
    response = admin_client.post(url, {**data, "csv_file": upload(CSV)})
    assert response.status_code == 400 and "already exists" in response.json()["errors"]["name"][0]
    assert ExampleSelection.objects.count() == 1


def test_api_study_exports(admin_client):
    campaign = finished_study()
    url = reverse("lexical-dtails-study", args=[campaign.pk])
    assert admin_client.get(url).content == exports.study_released_csv(campaign)
    assert admin_client.get(url + "?extended=true").content == exports.study_extended_csv(campaign)
    assert admin_client.get(reverse("lexical-dtails-study", args=[999])).status_code == 404
    page = admin_client.get(reverse("lexical:dtails_study_extended_csv", args=[campaign.pk]))
    assert page.content == exports.study_extended_csv(campaign)


def test_api_is_staff_only(annotator_client):
    assert annotator_client.post(reverse("lexical-dtails-list"), {}).status_code == 403
    assert annotator_client.get(reverse("lexical-dtails-study", args=[1])).status_code == 403


# --- commands --------------------------------------------------------------------------------


def test_commands_import_and_export(tmp_path):
    (tmp_path / "expert_dataset.csv").write_bytes(CSV)
    (tmp_path / "gl.words").write_bytes(WORDS)
    out = io.StringIO()
    csv_path, words_path = str(tmp_path / "expert_dataset.csv"), str(tmp_path / "gl.words")
    call_command(
        "import_dtails", csv_path, "--words", words_path, "--name", "cli gl", "--tgt-lang", "gl",
        stdout=out,
    )  # fmt: skip
    assert "8 examples of 3 concepts" in out.getvalue()
    selection = ExampleSelection.objects.get()
    call_command("export_dtails", "--selection", str(selection.pk), "-o", str(tmp_path / "out.csv"),
                 stderr=io.StringIO())  # fmt: skip
    assert (tmp_path / "out.csv").read_bytes() == CSV


def test_import_command_lists_errors_and_writes_nothing(tmp_path):
    (tmp_path / "bad.csv").write_bytes(BAD_LINE_4)
    with pytest.raises(CommandError, match="nothing was written:\ncsv_file: line 4: label 'nope'"):
        call_command("import_dtails", str(tmp_path / "bad.csv"), "--name", "x", "--tgt-lang", "gl")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_dtails", str(tmp_path / "none.csv"), "--name", "x", "--tgt-lang", "gl")
    assert not ExampleSelection.objects.exists()


def test_export_command_for_studies():
    campaign = finished_study()
    out = io.StringIO()
    call_command("export_dtails", "--campaign", str(campaign.pk), stdout=out)
    assert out.getvalue().encode() == exports.study_released_csv(campaign)
    out = io.StringIO()
    call_command("export_dtails", "--campaign", str(campaign.pk), "--extended", stdout=out)
    assert out.getvalue().encode() == exports.study_extended_csv(campaign)
    with pytest.raises(CommandError, match="not a lexical-selection study"):
        call_command("export_dtails", "--campaign", "999")
    with pytest.raises(CommandError, match="--extended is for studies"):
        call_command("export_dtails", "--selection", "1", "--extended")


def test_selection_page_offers_the_download_and_names_the_file(admin_client):
    response = admin_client.post(
        reverse("lexical:dtails"),
        {"name": "gl", "tgt_lang": "gl", "src_lang": "en", "csv_file": upload(CSV)},
    )
    html = admin_client.get(response["Location"]).content.decode()
    selection = ExampleSelection.objects.get()
    assert reverse("lexical:dtails_selection_csv", args=[selection.pk]) in html
    assert "Imported from the DTAiLS file <code>expert_dataset.csv</code>: 8 rows" in html


def test_imported_concepts_show_on_the_concept_pages(admin_client):
    admin_client.post(
        reverse("lexical:dtails"),
        {"name": "gl", "tgt_lang": "gl", "src_lang": "en", "csv_file": upload(CSV),
         "words_file": upload(WORDS, "gl.words")},
    )  # fmt: skip
    concept = Concept.objects.get(lemma="good")
    html = admin_client.get(reverse("lexical:concept_detail", args=[concept.pk])).content.decode()
    assert "mellor/mellores" in html and "óptimo" in html
    assert admin_client.get(reverse("lexical:concept_list")).status_code == 200
