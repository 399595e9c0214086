"""The concept word marked in the source on the choice annotate page (any choice item with
meta["source_highlight"]): escaping, untrusted offsets, RTL and CJK text, and nothing of the
answer key shown to annotators."""

from __future__ import annotations

import re

import pytest

from annotation.protocols.choice import highlighted_source, valid_highlight
from annotation.services.campaigns import create_campaign
from tests.annotation.factories import choice_item, enrolled

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([2, 5], (2, 5)),
        ((0, 10), (0, 10)),
        ([0, 11], None),  # past the end
        ([5, 5], None),  # empty
        ([6, 2], None),  # reversed
        ([-1, 3], None),
        ([1.0, 3], None),
        ([True, 3], None),  # a bool is not an offset
        (["1", "3"], None),
        ([1], None),
        ([1, 2, 3], None),
        (None, None),
        ("1-3", None),
        ({"start": 1, "end": 3}, None),
    ],
)
def test_valid_highlight_accepts_only_two_ordered_int_offsets_in_range(value, expected):
    assert valid_highlight(value, "0123456789") == expected


def _page(client, meta: dict, source: str, **item_fields) -> str:
    item = choice_item(1, source=source, meta=meta, **item_fields)
    campaign = create_campaign(f"Highlight {len(meta)}-{source[:5]}", "choice", [item])
    annotator = enrolled(campaign, "reader")
    client.force_login(annotator.user)
    item_url = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
    page = client.get(item_url)
    assert page.status_code == 200
    return page.content.decode()


def _source_div(html: str) -> str:
    match = re.search(r'<div class="segment source"[^>]*>(.*?)</div>', html, re.S)
    assert match is not None
    return match.group(0)


def test_the_concept_word_is_marked_and_the_text_escaped(client):
    source = "<b>And</b> the art of improvisation & composition."
    start = source.index("art")
    div = _source_div(_page(client, {"source_highlight": [start, start + 3]}, source))
    assert '<mark class="focus-word">art</mark>' in div
    assert "&lt;b&gt;And&lt;/b&gt;" in div and "<b>" not in div
    assert "improvisation &amp; composition." in div
    assert 'dir="auto"' in div


def test_markup_inside_the_marked_word_is_escaped_too(client):
    source = "x<script>y"
    div = _source_div(_page(client, {"source_highlight": [1, 9]}, source))
    assert '<mark class="focus-word">&lt;script&gt;</mark>' in div


@pytest.mark.parametrize("bad", [[3, 999], [5, 2], "3:5", [1.5, 3], None, [True, 4]])
def test_invalid_offsets_show_the_sentence_unmarked(client, bad):
    source = "We talked about the art yesterday."
    div = _source_div(_page(client, {"source_highlight": bad}, source))
    assert "<mark" not in div
    assert "We talked about the art yesterday." in div


def test_codepoint_offsets_mark_cjk_and_rtl_text(client):
    japanese = "芸術と美術の違いは何ですか。"
    div = _source_div(_page(client, {"source_highlight": [0, 2]}, japanese, src_lang="ja"))
    assert '<mark class="focus-word">芸術</mark>と美術の違いは何ですか。' in div
    assert 'lang="ja"' in div and 'dir="auto"' in div


def test_rtl_source_keeps_dir_auto_and_marks_the_right_word(client):
    hebrew = "הלכנו לשוק וקנינו תמרים טריים."
    start = hebrew.index("תמרים")
    div = _source_div(
        _page(client, {"source_highlight": [start, start + 5]}, hebrew, src_lang="he")
    )
    assert '<mark class="focus-word">תמרים</mark>' in div
    assert 'dir="auto"' in div


def test_the_annotate_page_never_shows_the_attested_variation_or_the_translation(client):
    meta = {
        "attested": "ATTESTED-SECRET",
        "target_text": "ORIGINAL-TRANSLATION-SECRET",
        "source_highlight": [0, 8],
    }
    html = _page(client, meta, "Sentence about art.", choices=["ATTESTED-SECRET", "other"])
    # The option itself is offered (it is one of the choices), but never singled out.
    assert html.count("ATTESTED-SECRET") == 1
    assert "ORIGINAL-TRANSLATION-SECRET" not in html
    assert "source_highlight" not in html and "target_text" not in html


def test_options_carry_numeric_shortcuts_for_keyboard_only_work(client):
    html = _page(client, {}, "A sentence.")
    for n in (1, 2, 3):
        assert f'data-key="{n}"' in html and f"<kbd>{n}</kbd>" in html
    assert "Ctrl</kbd>+<kbd>Enter" in html


def test_highlighted_source_reads_any_item_like_object():
    class Item:
        source = "I ate a date."
        meta = {"source_highlight": [8, 12]}

    assert highlighted_source(Item()) == ("I ate a ", "date", ".")
    Item.meta = {"source_highlight": None}
    assert highlighted_source(Item()) is None
    Item.meta = "not a dict"  # type: ignore[assignment]
    assert highlighted_source(Item()) is None
