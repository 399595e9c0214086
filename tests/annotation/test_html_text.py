"""Item text in HTML: sanitising, visible text, highlights (annotation/html_text.py, ADR 0033)."""

from __future__ import annotations

import pytest

from annotation.html_text import highlight, html_item, sanitize, visible_text


def shown(text: str) -> str:
    return visible_text(sanitize(text))


# --- sanitising -------------------------------------------------------------------------------


def test_the_inline_tags_stay():
    text = "<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><s>x</s><sub>2</sub><sup>3</sup>"
    assert sanitize(text + "<small>m</small>") == text + "<small>m</small>"


def test_a_span_keeps_only_its_classes_prefixed():
    text = '<span class="g err-major" style="color:red" onclick="x()" id="k">word</span>'
    assert sanitize(text) == '<span class="item-g item-err-major">word</span>'


@pytest.mark.parametrize(
    ("hostile", "clean"),
    [
        ("<script>alert(1)</script>ok", "ok"),
        ("<style>b{display:none}</style>ok", "ok"),
        ('<a href="javascript:alert(1)">link</a>', "link"),
        ('<img src="x" onerror="alert(1)">text', "text"),
        ('<b onmouseover="alert(1)">bold</b>', "<b>bold</b>"),
        ("<iframe src=//evil></iframe>after", "after"),
        ("<!-- hidden -->seen", "seen"),
        ("<svg><script>alert(1)</script></svg>x", "x"),
        ("<mark>looks like an error</mark>", "looks like an error"),
        ("<p>one</p><div>two</div>", "onetwo"),
    ],
)
def test_everything_else_goes_and_its_text_stays(hostile, clean):
    assert sanitize(hostile) == clean


def test_sanitising_twice_changes_nothing():
    once = sanitize('<span class="hl x">a</span> <b>b<i>c</b> &amp; <br>d<script>e</script>')
    assert sanitize(once) == once


def test_unclosed_tags_are_closed():
    assert sanitize("<b>bold <i>both") == "<b>bold <i>both</i></b>"
    assert shown("<b>bold <i>both") == "bold both"


def test_a_stray_closing_tag_and_a_bare_angle_bracket_are_text_or_nothing():
    assert shown("a</b> < b > c") == "a < b > c"


def test_line_breaks_and_nul_read_as_a_browser_reads_them():
    assert sanitize("a\r\nb\rc\x00d") == "a\nb\ncd"


def test_huge_nesting_is_cleaned_without_recursion_errors():
    deep = "<b>" * 5000 + "deep" + "</b>" * 5000
    assert shown(deep) == "deep"
    assert shown("<span>" * 5000 + "x") == "x"


# --- visible text -----------------------------------------------------------------------------


def test_visible_text_drops_tags_and_keeps_whitespace():
    assert shown("The <b>big</b>  <i>dog</i>\tran") == "The big  dog\tran"


def test_br_is_one_newline():
    assert shown("one<br>two<br/>three<br />") == "one\ntwo\nthree\n"


def test_entities_are_decoded():
    assert shown("&lt;b&gt; &amp; caf&eacute; &#x1F600; &nbsp;") == "<b> & café 😀 \xa0"


def test_emoji_cjk_and_rtl_are_counted_in_code_points():
    text = "<b>👍🏽</b> 東京<i>へ</i> שָׁלוֹם"
    assert shown(text) == "👍🏽 東京へ שָׁלוֹם"
    assert len(shown("<b>😀</b>x")) == 2


# --- items ------------------------------------------------------------------------------------


def test_an_html_item_keeps_its_markup_in_meta_and_its_visible_text():
    item = html_item({"source": "A <b>big</b> dog", "target": "Ein <b>gro&szlig;er</b> Hund",
                      "meta": {"k": 1}})  # fmt: skip
    assert item["source"] == "A big dog"
    assert item["target"] == "Ein großer Hund"
    assert item["meta"] == {
        "k": 1,
        "html": {"source": "A <b>big</b> dog", "target": "Ein <b>großer</b> Hund"},
    }


def test_an_html_item_without_text_or_with_bad_meta_is_left_to_the_protocol():
    assert html_item("not an item") == "not an item"
    assert html_item({"target": "x", "meta": [1]})["meta"] == [1]


# --- highlights -------------------------------------------------------------------------------


def test_a_span_inside_one_text_run_is_one_mark():
    html = sanitize("The <b>big</b> dog")
    assert highlight(html, [(8, 11, "err-minor")]) == (
        'The <b>big</b> <mark class="hs-span err-minor">dog</mark>'
    )


def test_a_span_crossing_a_tag_is_split_into_marks_that_keep_the_tags_balanced():
    html = sanitize("The <b>big dog</b> ran")
    marked = highlight(html, [(8, 15, "err-major")])
    assert marked == (
        'The <b>big <mark class="hs-span err-major">dog</mark></b>'
        '<mark class="hs-span err-major"> ran</mark>'
    )
    assert visible_text(marked) == visible_text(html)


def test_overlapping_spans_share_a_mark_where_they_overlap():
    marked = highlight("abcdef", [(0, 4, "err-minor"), (2, 6, "err-major")])
    assert marked == (
        '<mark class="hs-span err-minor">ab</mark>'
        '<mark class="hs-span err-minor err-major">cd</mark>'
        '<mark class="hs-span err-major">ef</mark>'
    )


def test_a_span_over_a_br_and_entities_counts_them_as_visible_characters():
    html = sanitize("a &amp; b<br>c")
    assert visible_text(html) == "a & b\nc"
    assert highlight(html, [(2, 7, "e")]) == (
        'a <mark class="hs-span e">&amp; b</mark><br><mark class="hs-span e">c</mark>'
    )


def test_emoji_offsets_are_code_points():
    html = sanitize("<i>😀</i>ok")
    assert highlight(html, [(0, 2, "e")]) == (
        '<i><mark class="hs-span e">😀</mark></i><mark class="hs-span e">o</mark>k'
    )


@pytest.mark.parametrize("span", [(3, 3, "e"), (4, 2, "e"), (-1, 2, "e"), (0, 99, "e")])
def test_empty_reversed_or_out_of_range_spans_are_refused(span):
    with pytest.raises(ValueError):
        highlight(sanitize("<b>abc</b>def"), [span])


def test_no_spans_gives_the_sanitised_html_back():
    html = sanitize('x <span class="hl">y</span> &lt;z&gt;<br>w')
    assert highlight(html, []) == html
