"""Item text written in HTML: sanitising, its visible text, highlights (pure Python).

Appraise and Pearmut items may carry inline markup (``<b>``, ``<i>``, ``<br>``, Appraise's
``<span class=...>``). In a campaign whose ``text_format`` is ``html`` (ADR 0033):

1. the markup is cleaned by :func:`sanitize` (nh3, the Rust ``ammonia`` sanitiser) down to the
   small inline set in :data:`ALLOWED_TAGS`; every other tag is dropped with its text kept
   (``<script>``/``<style>`` with their content), attributes other than ``class`` on ``<span>``
   are dropped and each class is prefixed with :data:`CLASS_PREFIX` so an item cannot reuse the
   page's own classes;
2. the annotated text is the :func:`visible_text` of the sanitised HTML: its text nodes in
   document order, character references decoded, each ``<br>`` one ``"\\n"``; whitespace is kept
   as it is (the page shows it with ``white-space: pre-wrap``). This is what the browser's DOM
   holds, so the page and the server count the same characters;
3. span offsets (code points, end exclusive, as everywhere) index that visible text, and
   :func:`highlight` draws them back into the HTML as ``<mark>`` elements, one per run of text
   between two tags, so that a span crossing a tag boundary never breaks the tag structure.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Iterable, Mapping
from html.parser import HTMLParser
from typing import Any

import nh3

PLAIN = "plain"
HTML = "html"
TEXT_FORMATS = (PLAIN, HTML)

ALLOWED_TAGS = frozenset({"b", "strong", "i", "em", "u", "s", "sub", "sup", "small", "br", "span"})
"""Inline tags that change how text looks, not what it says. No links (an annotator should not
leave the page, and an ``href`` is a place for ``javascript:``), no images (they have no text
to mark), no ``style`` (it can hide text the annotator is asked to judge), no ``<mark>`` (it
would look like a marked error)."""

CLASS_PREFIX = "item-"
MARK_CLASS = "hs-span"
"""The class of the ``<mark>`` elements :func:`highlight` draws (an item's own classes are
prefixed, so they never collide with it)."""


def _prefixed_class(element: str, attribute: str, value: str) -> str | None:
    if element == "span" and attribute == "class":
        # Already prefixed names stay as they are: sanitising twice changes nothing.
        names = (n if n.startswith(CLASS_PREFIX) else CLASS_PREFIX + n for n in value.split())
        return " ".join(names) or None
    return None


def sanitize(text: str) -> str:
    """``text`` with only :data:`ALLOWED_TAGS` left (and ``class`` on ``<span>``), well formed.

    Line breaks are normalised to ``"\\n"`` and NUL characters dropped first, as an HTML parser
    does, so that the stored HTML parses to the same text on the server and in the browser.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return nh3.clean(
        text,
        tags=set(ALLOWED_TAGS),
        attributes={"span": {"class"}},
        attribute_filter=_prefixed_class,
        strip_comments=True,
        link_rel=None,
    )


class _Tokens(HTMLParser):
    """Sanitised HTML as a list of tokens: ``("text", str)``, ``("br", "")``,
    ``("start", serialised tag)``, ``("end", serialised tag)``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.tokens.append(("br", ""))
            return
        rendered = "".join(f' {name}="{html.escape(value or "")}"' for name, value in attrs)
        self.tokens.append(("start", f"<{tag}{rendered}>"))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag != "br":
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag != "br":
            self.tokens.append(("end", f"</{tag}>"))

    def handle_data(self, data: str) -> None:
        self.tokens.append(("text", data))


def _tokens(sanitized: str) -> list[tuple[str, str]]:
    parser = _Tokens()
    parser.feed(sanitized)
    parser.close()
    return parser.tokens


def visible_text(sanitized: str) -> str:
    """The text an annotator sees in (already sanitised) HTML: what span offsets index."""
    return "".join(
        "\n" if kind == "br" else value
        for kind, value in _tokens(sanitized)
        if kind in ("text", "br")
    )


def html_item(raw: Any) -> Any:
    """An imported item of an ``html`` campaign: ``source`` and ``target`` become their visible
    text and ``meta["html"]`` keeps their sanitised HTML. Anything that is not an item with text
    is left for the protocol's checks to refuse."""
    if not isinstance(raw, Mapping):
        return raw
    item = dict(raw)
    kept: dict[str, str] = {}
    for side in ("source", "target"):
        if isinstance(raw.get(side), str):
            kept[side] = sanitize(raw[side])
            item[side] = visible_text(kept[side])
    meta = raw.get("meta")
    # A meta that is not an object is left as it is: the protocol's check names it.
    if kept and (meta is None or isinstance(meta, Mapping)):
        item["meta"] = {**(meta or {}), "html": kept}
    return item


def _cuts(spans: Iterable[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Non-empty spans, refusing empty or reversed ones (a highlight must cover something)."""
    out = []
    for start, end, css in spans:
        if not (isinstance(start, int) and isinstance(end, int)) or start >= end or start < 0:
            raise ValueError(f"a highlight needs 0 <= start < end, got {start}..{end}")
        out.append((start, end, css))
    return out


def _marked(text: str, offset: int, spans: list[tuple[int, int, str]]) -> str:
    """One run of text starting at visible offset ``offset``, with the parts under spans in
    ``<mark>``s (a part under several spans gets one mark with all their classes)."""
    end = offset + len(text)
    edges = {offset, end}
    for start, stop, _css in spans:
        edges.update(e for e in (start, stop) if offset < e < end)
    pieces = []
    ordered = sorted(edges)
    for a, b in itertools.pairwise(ordered):
        chunk = html.escape(text[a - offset : b - offset], quote=False)
        classes = [css for start, stop, css in spans if start <= a and b <= stop]
        if classes:
            names = " ".join([MARK_CLASS, *dict.fromkeys(c for c in classes if c)])
            pieces.append(f'<mark class="{html.escape(names)}">{chunk}</mark>')
        else:
            pieces.append(chunk)
    return "".join(pieces)


def highlight(sanitized: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """Sanitised HTML with ``(start, end, css class)`` spans over its visible text drawn as
    ``<mark class="hs-span <class>">``; a span across tags becomes one mark per text run.

    ``ValueError`` for an empty, reversed or out-of-range span.
    """
    cuts = _cuts(spans)
    length = len(visible_text(sanitized))
    for start, end, _css in cuts:
        if end > length:
            raise ValueError(f"highlight {start}..{end} is beyond the text ({length})")
    out, offset = [], 0
    for kind, value in _tokens(sanitized):
        if kind == "text":
            out.append(_marked(value, offset, cuts))
            offset += len(value)
        elif kind == "br":
            out.append("<br>")
            offset += 1
        else:
            out.append(value)
    return "".join(out)
