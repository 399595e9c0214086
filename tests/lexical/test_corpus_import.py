"""Importing parallel corpora: every format, through the service, the command, the page and
the API; refused input names the line and writes nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from lexical.corpora import reading
from lexical.corpora.services import CorpusImportError, CorpusSource, import_corpus_pairs
from lexical.mining.services import start_mining
from lexical.models import ParallelCorpus, SentencePair

pytestmark = pytest.mark.django_db

EN = b"The trip was long.\nWe took a short trip.\nA journey by train.\n"
ES = "El viaje fue largo.\nHicimos un recorrido corto.\nUn viaje en tren a León.\n".encode()


def _tsv(*rows: str) -> bytes:
    return "".join(f"{row}\n" for row in rows).encode()


def _moses(src: bytes, tgt: bytes, **names) -> CorpusSource:
    return CorpusSource(format="moses", src=io.BytesIO(src), tgt=io.BytesIO(tgt), **names)


def _import(source: CorpusSource, **options) -> ParallelCorpus:
    options = {"name": "opus", "src_lang": "en", "tgt_lang": "es", **options}
    return import_corpus_pairs(source, **options)


def _refused(source: CorpusSource, **options) -> CorpusImportError:
    with pytest.raises(CorpusImportError) as caught:
        _import(source, **options)
    assert ParallelCorpus.objects.count() == 0
    assert SentencePair.objects.count() == 0
    return caught.value


# --- Formats -----------------------------------------------------------------------------


def test_moses_pair_of_files_imports_line_by_line():
    corpus = _import(_moses(EN, ES))
    assert (corpus.size, corpus.source_format, corpus.status) == (3, "moses", "ready")
    pairs = list(corpus.pairs.values_list("position", "src", "tgt"))
    assert pairs == [
        (1, "The trip was long.", "El viaje fue largo."),
        (2, "We took a short trip.", "Hicimos un recorrido corto."),
        (3, "A journey by train.", "Un viaje en tren a León."),
    ]


def test_tsv_with_crlf_and_bom_and_no_final_newline():
    data = "\ufeffThe trip.\tEl viaje.\r\nA tour.\tUn recorrido.".encode()
    corpus = _import(CorpusSource(format="tsv", file=io.BytesIO(data)))
    assert list(corpus.pairs.values_list("src", "tgt")) == [
        ("The trip.", "El viaje."),
        ("A tour.", "Un recorrido."),
    ]


def test_jsonl_ignores_other_keys():
    lines = [
        {"src": "The trip.", "tgt": "El viaje.", "id": 7},
        {"tgt": "Un tour.", "src": "A tour."},
    ]
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    corpus = _import(CorpusSource(format="jsonl", file=io.BytesIO(data)))
    assert list(corpus.pairs.values_list("position", "src")) == [(1, "The trip."), (2, "A tour.")]


def test_language_codes_are_standardised():
    corpus = _import(_moses(EN, ES), src_lang="EN", tgt_lang="pt-br")
    assert (corpus.src_lang, corpus.tgt_lang) == ("en", "pt-BR")


def test_small_chunks_write_every_pair_once():
    rows = [f"sentence {i}\tfrase {i}" for i in range(1, 12)]
    corpus = _import(CorpusSource(format="tsv", file=io.BytesIO(_tsv(*rows))), chunk_size=4)
    assert corpus.size == 11
    assert list(corpus.pairs.values_list("position", flat=True)) == list(range(1, 12))


# --- Refused input: the line is named, nothing is written --------------------------------


def test_misaligned_files_say_which_file_ends_first():
    error = _refused(_moses(EN, ES[: ES.rindex(b"Un")], src_name="c.en", tgt_name="c.es"))
    assert str(error) == "line 3: misaligned files: c.es ends after line 2 but c.en goes on"
    error = _refused(_moses(EN + b"Extra line.\n", ES, src_name="c.en", tgt_name="c.es"))
    assert error.line == 4 and "c.es ends after line 3 but c.en goes on" in str(error)
    error = _refused(_moses(EN, ES + "Línea de más.\n".encode(), src_name="c.en", tgt_name="c.es"))
    assert error.line == 4 and "c.en ends after line 3 but c.es goes on" in str(error)


def test_bad_utf8_names_the_file_and_line():
    bad = ES.replace(b"recorrido", b"recorr\xffido")
    error = _refused(_moses(EN, bad, src_name="c.en", tgt_name="c.es"))
    assert str(error).startswith("c.es: line 2: not valid UTF-8")
    assert error.file == "c.es" and error.line == 2


@pytest.mark.parametrize(
    ("data", "line", "message"),
    [
        (
            _tsv("a\tb", "only one column"),
            2,
            "expected 2 tab-separated columns (source, target), found 1",
        ),
        (_tsv("a\tb", "a\tb\tc"), 2, "found 3"),
        (_tsv("a\tb", "a\t  "), 2, "the target side is empty"),
        (_tsv("\tb"), 1, "the source side is empty"),
        (_tsv("a\tb", "", "c\td"), 2, "found 1"),
        (_tsv("a\x00x\tb"), 1, "the source side contains a control character"),
        (b"a\tb\n" + b"x" * (reading.MAX_LINE_BYTES + 10) + b"\tb\n", 2, "longer than 64 KiB"),
    ],
)
def test_malformed_tsv(data, line, message):
    error = _refused(CorpusSource(format="tsv", file=io.BytesIO(data), file_name="c.tsv"))
    assert error.line == line
    assert message in str(error) and str(error).startswith(f"c.tsv: line {line}:")


@pytest.mark.parametrize(
    ("line_text", "message"),
    [
        ('["a", "b"]', "expected a JSON object"),
        ('{"src": "a"}', 'the object has no "tgt" key'),
        ('{"src": 1, "tgt": "b"}', '"src" must be a string'),
        ('{"src": "a", "tgt": "b", "src": "c"}', "duplicate key 'src'"),
        ('{"src": "a", "tgt": NaN}', "NaN"),
        ('{"src": "a", "tgt": ', "not valid JSON"),
        ("", "empty line"),
        ('{"src": "a", "tgt": "   "}', "the target side is empty"),
    ],
)
def test_malformed_jsonl(line_text, message):
    data = ('{"src": "fine", "tgt": "bien"}\n' + line_text + "\n").encode()
    error = _refused(CorpusSource(format="jsonl", file=io.BytesIO(data)))
    assert error.line == 2 and message in str(error)


def test_error_on_the_last_line_rolls_back_earlier_chunks():
    rows = [f"s{i}\tt{i}" for i in range(20)] + ["broken"]
    error = _refused(CorpusSource(format="tsv", file=io.BytesIO(_tsv(*rows))), chunk_size=5)
    assert error.line == 21


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"name": "  "}, "name", "a corpus needs a name"),
        ({"src_lang": "english!"}, "src_lang", "not a language code"),
        ({"tgt_lang": "xx"}, "tgt_lang", "unknown language code"),
        ({"tgt_lang": "EN"}, "tgt_lang", "source and target languages are the same"),
    ],
)
def test_bad_options(options, field, message):
    error = _refused(_moses(EN, ES), **options)
    assert error.field == field and message in str(error)


def test_taken_name_and_empty_file():
    _import(_moses(EN, ES))
    with pytest.raises(CorpusImportError, match="already a corpus named 'opus'"):
        _import(_moses(EN, ES))
    with pytest.raises(CorpusImportError, match="no sentence pair"):
        _import(CorpusSource(format="tsv", file=io.BytesIO(b"")), name="empty")
    assert ParallelCorpus.objects.count() == 1


# --- Command ------------------------------------------------------------------------------


def test_command_imports_each_format(tmp_path):
    (tmp_path / "c.en").write_bytes(EN)
    (tmp_path / "c.es").write_bytes(ES)
    (tmp_path / "c.tsv").write_bytes(_tsv("a\tb"))
    (tmp_path / "c.jsonl").write_bytes(b'{"src": "a", "tgt": "b"}\n')
    out = io.StringIO()
    args = ["--src-lang", "en", "--tgt-lang", "es"]
    call_command(
        "import_corpus_pairs", "m", *args, "--src", tmp_path / "c.en", "--tgt", tmp_path / "c.es",
        stdout=out,
    )  # fmt: skip
    call_command("import_corpus_pairs", "t", *args, "--tsv", tmp_path / "c.tsv", stdout=out)
    call_command("import_corpus_pairs", "j", *args, "--jsonl", tmp_path / "c.jsonl", stdout=out)
    assert "Imported 'm'" in out.getvalue() and "3 sentence pairs" in out.getvalue()
    sizes = dict(ParallelCorpus.objects.values_list("name", "size"))
    assert sizes == {"m": 3, "t": 1, "j": 1}


def test_command_errors_are_one_line(tmp_path):
    (tmp_path / "c.en").write_bytes(EN)
    (tmp_path / "c.es").write_bytes(ES + b"\xc3\n")
    args = ["x", "--src-lang", "en", "--tgt-lang", "es"]
    with pytest.raises(CommandError, match=r"^nothing was written: c.es: line 4: not valid UTF-8"):
        call_command(
            "import_corpus_pairs", *args, "--src", tmp_path / "c.en", "--tgt", tmp_path / "c.es"
        )
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_corpus_pairs", *args, "--tsv", tmp_path / "missing.tsv")
    with pytest.raises(CommandError, match="give --src FILE --tgt FILE"):
        call_command("import_corpus_pairs", *args, "--src", tmp_path / "c.en")
    assert ParallelCorpus.objects.count() == 0


# --- Page ---------------------------------------------------------------------------------


def _upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def test_upload_page_imports_moses_and_shows_the_corpus(admin_client):
    response = admin_client.post(
        reverse("lexical:corpus_import"),
        {
            "name": "opus-en-es", "src_lang": "en", "tgt_lang": "es", "format": "moses",
            "src_file": _upload("c.en", EN), "tgt_file": _upload("c.es", ES),
        },
    )  # fmt: skip
    corpus = ParallelCorpus.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("lexical:corpus_detail", args=[corpus.pk])
    page = admin_client.get(response["Location"]).content.decode()
    assert "opus-en-es" in page and "Hicimos un recorrido corto." in page
    assert "en → es" in page and "moses" in page


def test_upload_page_names_the_bad_line(admin_client):
    response = admin_client.post(
        reverse("lexical:corpus_import"),
        {"name": "bad", "src_lang": "en", "tgt_lang": "es", "format": "tsv",
         "file": _upload("c.tsv", _tsv("a\tb", "<b>oops</b>"))},
    )  # fmt: skip
    assert response.status_code == 400
    body = response.content.decode()
    assert "Nothing was written." in body and "c.tsv: line 2: expected 2 tab-separated" in body
    assert "&lt;b&gt;oops" not in body and "<b>oops" not in body  # the line text is not echoed
    assert ParallelCorpus.objects.count() == 0


def test_upload_page_requires_both_moses_files(admin_client):
    response = admin_client.post(
        reverse("lexical:corpus_import"),
        {"name": "x", "src_lang": "en", "tgt_lang": "es", "format": "moses",
         "src_file": _upload("c.en", EN)},
    )  # fmt: skip
    assert response.status_code == 400
    assert "The moses format needs both files." in response.content.decode()


def test_pages_are_staff_only(client, annotator_client):
    for url in (reverse("lexical:home"), reverse("lexical:corpus_import")):
        assert client.get(url).status_code == 302
        assert annotator_client.get(url).status_code == 302


def test_corpus_page_paginates_with_htmx(admin_client):
    rows = [f"source {i}\ttarget {i}" for i in range(1, 31)]
    corpus = _import(CorpusSource(format="tsv", file=io.BytesIO(_tsv(*rows))))
    url = reverse("lexical:corpus_detail", args=[corpus.pk])
    first = admin_client.get(url).content.decode()
    assert "source 25" in first and "source 26" not in first and "page 1 of 2" in first
    partial = admin_client.get(url + "?page=2", headers={"HX-Request": "true"}).content.decode()
    assert "source 26" in partial and "<nav" not in partial


def test_a_ready_corpus_page_offers_to_mine_it_and_lists_its_mining_jobs(admin_client):
    corpus = _import(CorpusSource(format="tsv", file=io.BytesIO(_tsv("a b\tc d"))))
    url = reverse("lexical:corpus_detail", args=[corpus.pk])
    mine = f'href="{reverse("lexical:mining_new")}?corpus={corpus.pk}"'
    assert mine in admin_client.get(url).content.decode()
    job = start_mining(corpus, {}, enqueue=False)
    page = admin_client.get(url).content.decode()
    assert f'href="{reverse("lexical:mining_job", args=[job.pk])}">Mining #{job.pk}</a>' in page
    form = admin_client.get(reverse("lexical:mining_new") + f"?corpus={corpus.pk}")
    assert f'<option value="{corpus.pk}" selected>' in form.content.decode()
    ParallelCorpus.objects.filter(pk=corpus.pk).update(status=ParallelCorpus.Status.IMPORTING)
    importing = admin_client.get(url).content.decode()
    assert mine not in importing and "can be mined once its import has finished" in importing


def test_home_lists_corpora_and_nav_has_one_lexical_entry(admin_client):
    _import(_moses(EN, ES), name="<i>opus</i>")
    page = admin_client.get(reverse("lexical:home")).content.decode()
    assert "&lt;i&gt;opus&lt;/i&gt;" in page
    assert page.count(f'href="{reverse("lexical:home")}"') >= 1
    assert page.count(">Lexical</a>") == 1
    assert "<title>Lexical selection · Hardset</title>" in page
    for section in ("corpora", "mining", "concepts", "selections", "rules", "evaluations"):
        assert page.count(f'<section id="{section}">') == 1


# --- API ----------------------------------------------------------------------------------


def test_api_imports_multipart_and_lists(admin_client):
    url = reverse("lexical-corpus-list")
    response = admin_client.post(
        url,
        {"name": "api", "src_lang": "en", "tgt_lang": "es", "format": "jsonl",
         "file": _upload("c.jsonl", b'{"src": "a", "tgt": "b"}\n')},
    )  # fmt: skip
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["name"], body["size"], body["source_format"]) == ("api", 1, "jsonl")
    pairs = admin_client.get(reverse("lexical-corpus-pairs", args=[body["id"]])).json()
    assert pairs["results"] == [{"position": 1, "src": "a", "tgt": "b"}]
    assert [c["name"] for c in admin_client.get(url).json()["results"]] == ["api"]


def test_api_refusal_names_field_and_line(admin_client):
    response = admin_client.post(
        reverse("lexical-corpus-list"),
        {"name": "api", "src_lang": "en", "tgt_lang": "es", "format": "moses",
         "src_file": _upload("c.en", EN), "tgt_file": _upload("c.es", ES + b"\xff\n")},
    )  # fmt: skip
    assert response.status_code == 400
    body = response.json()
    assert body["line"] == 4 and list(body["errors"]) == ["tgt_file"]
    assert "c.es: line 4: not valid UTF-8" in body["detail"]
    misaligned = admin_client.post(
        reverse("lexical-corpus-list"),
        {"name": "api", "src_lang": "en", "tgt_lang": "es", "format": "moses",
         "src_file": _upload("c.en", EN), "tgt_file": _upload("c.es", ES + b"more\n")},
    ).json()  # fmt: skip
    assert sorted(misaligned["errors"]) == ["src_file", "tgt_file"] and misaligned["line"] == 4
    assert ParallelCorpus.objects.count() == 0


def _field_error(response, field: str) -> str:
    """A serializer's error is keyed by field at the top; a refused import under "errors"."""
    body = response.json()
    return str(body.get("errors", body)[field])


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"format": "tsv"}, "file", "the tsv format needs a file"),
        ({"format": "moses"}, "src_file", "needs both src_file and tgt_file"),
        ({"format": "xml"}, "format", "not a valid choice"),
        ({"format": "tsv", "file": b"a\tb\n", "src_lang": "??"}, "src_lang", "not a language code"),
        ({"format": "tsv", "file": b"a\tb\n", "name": ""}, "name", "may not be blank"),
    ],
)
def test_api_field_errors(admin_client, fields, field, message):
    data = {"name": "x", "src_lang": "en", "tgt_lang": "es", **fields}
    if "file" in data:
        data["file"] = _upload("c.tsv", data["file"])
    response = admin_client.post(reverse("lexical-corpus-list"), data)
    assert response.status_code == 400
    assert message in _field_error(response, field)
    assert ParallelCorpus.objects.count() == 0


def test_api_is_staff_only(annotator_client):
    assert annotator_client.get(reverse("lexical-corpus-list")).status_code == 403
