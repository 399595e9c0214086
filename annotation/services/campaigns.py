"""Campaigns and their items: create, import (JSONL and the other file formats), add items,
generate attention checks.

Other apps create campaigns with :func:`create_campaign` (or :func:`add_items` to one they made)
and listen to ``annotation.signals.item_completed``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation import corruption, formats, html_text, protocols
from annotation.formats import google_mqm, offsets
from annotation.models import Campaign, Item
from annotation.refusals import CampaignImportError
from formats.jsonl import LineProblem, read_jsonl

_MAX_REPORTED_ERRORS = 20


def _normalize(
    protocol: str, raw: Any, defaults, offset_unit: str, text_format: str = html_text.PLAIN
) -> dict:
    """One item validated by its protocol, its span offsets first read in ``offset_unit``;
    in an ``html`` campaign its text first becomes visible text (markup kept in meta)."""
    if offset_unit not in offsets.UNITS:
        raise ValidationError({"offset_unit": f"must be one of {', '.join(offsets.UNITS)}"})
    if text_format == html_text.HTML:
        raw = html_text.html_item(raw)
    if offset_unit == "utf16":
        try:
            raw = offsets.item_from_utf16(raw)
        except ValueError as exc:
            raise protocols.ItemError(str(exc)) from None
    return protocols.normalize_item(protocol, raw, defaults)


def parse_jsonl(
    source: str | bytes | IO | Iterable,
    protocol: str,
    defaults=None,
    offset_unit="codepoint",
    text_format=html_text.PLAIN,
) -> list[dict]:
    """Parse and validate JSONL items; raise :class:`CampaignImportError` listing bad lines.

    Blank lines are skipped (their numbers still count). Every line is checked so the admin sees
    all problems at once (the first 20). ``offset_unit="utf16"`` reads span offsets as
    JavaScript string indices (ADR 0013).
    """
    items: list[dict] = []
    errors: list[tuple[int, str]] = []
    for number, data in read_jsonl(source):
        if isinstance(data, LineProblem):
            errors.append((number, data.reason))
            continue
        try:
            items.append(_normalize(protocol, data, defaults, offset_unit, text_format))
        except protocols.ItemError as exc:
            errors.append((number, str(exc)))
        if len(errors) >= _MAX_REPORTED_ERRORS:
            break
    if errors:
        raise CampaignImportError(errors)
    if not items:
        raise CampaignImportError([(0, "the file has no items")])
    return items


def _normalize_dicts(
    protocol: str,
    items: Iterable[Mapping],
    defaults,
    offset_unit: str = "codepoint",
    text_format: str = html_text.PLAIN,
) -> list[dict]:
    normalized, errors = [], []
    for number, raw in enumerate(items, start=1):
        # A file reader says where the item comes from ("data, task 2, document 1, item 3").
        where = raw.get(formats.WHERE) if isinstance(raw, Mapping) else None
        if where:
            raw = {key: value for key, value in raw.items() if key != formats.WHERE}
        try:
            normalized.append(_normalize(protocol, raw, defaults, offset_unit, text_format))
        except protocols.ItemError as exc:
            errors.append((number, f"{where}: {exc}" if where else str(exc)))
    if errors:
        raise CampaignImportError(errors[:_MAX_REPORTED_ERRORS], unit="item")
    if not normalized:
        raise CampaignImportError([(0, "no items given")], unit="item")
    return normalized


def _text_format(settings: Mapping[str, Any]) -> str:
    """The campaign's ``text_format`` setting, checked before its items are read by it."""
    text_format = settings.get("text_format") or html_text.PLAIN
    if text_format not in html_text.TEXT_FORMATS:
        raise ValidationError(
            {"text_format": f"must be one of {', '.join(html_text.TEXT_FORMATS)}"}
        )
    return str(text_format)


def campaign_settings() -> set[str]:
    """The fields a user may set on import: editable ones, less the identity (id, name,
    protocol, the slug made from the name) and the creator (the caller passes ``created_by``)."""
    return {
        field.name
        for field in Campaign._meta.concrete_fields
        if field.editable and field.name not in ("id", "name", "protocol", "created_by")
    }


def _new_campaign(name: str, protocol: str, settings: dict[str, Any], first: dict) -> Campaign:
    settings = dict(settings)
    for key in ("src_lang", "tgt_lang"):
        if not settings.get(key):
            settings[key] = first.get(key, "")
    unknown = sorted(set(settings) - campaign_settings() - {"created_by"})
    if unknown:
        raise ValidationError(
            {key: "not a campaign setting" for key in unknown}
            | {"settings": f"known settings: {', '.join(sorted(campaign_settings()))}"}
        )
    campaign = Campaign(name=name, protocol=protocol, **settings)
    campaign.full_clean(exclude=["slug", "created_by"])
    campaign.save()
    return campaign


def _check_prefill_severities(campaign: Campaign, items: list[dict]) -> None:
    """Pre-filled spans use only the campaign's severities (``critical`` only where MQM enables
    it): the annotator could never submit such a span unchanged."""
    allowed = protocols.get(campaign.protocol).severities(campaign)
    errors = [
        (number, f"{item['doc_id']} {item['seg_id']} {item['system']}: prefill_spans[{n}]: "
         f"severity must be one of {', '.join(allowed)} in this campaign, "
         f"got {span['severity']!r}")
        for number, item in enumerate(items, start=1)
        for n, span in enumerate(item["prefill_spans"], start=1)
        if span["severity"] not in allowed
    ]  # fmt: skip
    if errors:
        raise CampaignImportError(errors[:_MAX_REPORTED_ERRORS], unit="item")


_TUTORIAL_IDENTITY = (
    "doc_id", "seg_id", "src_lang", "tgt_lang", "source", "target", "system", "expected",
    "question", "choices", "questions", "prefill_spans",
)  # fmt: skip
"""What makes a tutorial the same lesson as another (its provenance and ``meta`` aside)."""


def _tutorial_identity(item: Mapping[str, Any]) -> str:
    return json.dumps([item[name] for name in _TUTORIAL_IDENTITY], sort_keys=True)


def _without_repeated_tutorials(campaign: Campaign, items: list[dict]) -> list[dict]:
    """``items`` less the tutorials the campaign (or an earlier item) already has.

    Each annotator does every tutorial of a campaign once: the same lesson twice teaches
    nothing and costs their time. Appraise puts the same tutorials at the head of every batch of
    a file (two batches: twelve tutorials for six lessons), so a repeat is dropped on import.
    """
    seen = {
        _tutorial_identity(existing)
        for existing in campaign.items.filter(kind=Item.Kind.TUTORIAL).values(*_TUTORIAL_IDENTITY)
    }
    kept = []
    for item in items:
        if item["kind"] == Item.Kind.TUTORIAL:
            identity = _tutorial_identity(item)
            if identity in seen:
                continue
            seen.add(identity)
        kept.append(item)
    return kept


def _create_items(campaign: Campaign, items: list[dict]) -> list[Item]:
    _check_prefill_severities(campaign, items)
    items = _without_repeated_tutorials(campaign, items)
    last = campaign.items.order_by("-position").values_list("position", flat=True).first()
    start = 0 if last is None else last + 1
    rows = [Item(campaign=campaign, position=start + i, **item) for i, item in enumerate(items)]
    return Item.objects.bulk_create(rows, batch_size=1000)


def create_campaign(name: str, protocol: str, items: Iterable[Mapping], **settings) -> Campaign:
    """Create a campaign with its items, all or nothing.

    ``items`` are dicts with the JSONL fields (``doc_id``, ``seg_id``, ``source``, ``target``,
    ``choices``, ``origin``, ``origin_ref``, ``meta``, ...); ``settings`` are ``Campaign``
    fields (``overlap=3``, ``multi_select=True``, ``instructions="..."``); ``offset_unit``
    says how span offsets count (``codepoint`` or ``utf16``). Raises
    :class:`CampaignImportError` (``unit="item"``, 1-based numbers) or Django's
    ``ValidationError`` for bad settings; nothing is written then.
    """
    offset_unit = str(settings.pop("offset_unit", "codepoint"))
    defaults = {k: settings[k] for k in ("src_lang", "tgt_lang") if settings.get(k)}
    text_format = _text_format(settings)
    normalized = _normalize_dicts(protocol, items, defaults, offset_unit, text_format)
    with transaction.atomic():
        campaign = _new_campaign(name, protocol, settings, normalized[0])
        _create_items(campaign, normalized)
    return campaign


def add_items(campaign: Campaign, items: Iterable[Mapping]) -> list[Item]:
    """Append validated items to a campaign, all or nothing (same checks as the import)."""
    defaults = {"src_lang": campaign.src_lang, "tgt_lang": campaign.tgt_lang}
    normalized = _normalize_dicts(
        campaign.protocol, items, defaults, text_format=campaign.text_format
    )
    with transaction.atomic():
        return _create_items(campaign, normalized)


def _whole_file(source: str | bytes | IO | Iterable) -> bytes:
    if hasattr(source, "read"):
        source = source.read()
    if isinstance(source, str):
        return source.encode("utf-8")
    if isinstance(source, bytes):
        return source
    chunks: list[bytes] = []
    for line in source:
        chunks.append(line.encode("utf-8") if isinstance(line, str) else bytes(line))
    return b"".join(chunks)


def _items_in_format(
    data: bytes,
    file_format: str,
    protocol: str,
    defaults: Mapping[str, str],
    offset_unit: str = "codepoint",
    text_format: str = html_text.PLAIN,
    file_name: str = "",
) -> list[dict]:
    """Items of a whole file, refusing with a pointer to the right format when it looks like
    another one (a user who picked the wrong format gets its name, not a list of bad lines).
    A Google MQM TSV's rows name no languages: unless given, they come from a file name like
    ``mqm_ted_ende.tsv``."""
    if file_format not in formats.FORMATS:
        raise ValidationError({"format": f"unknown format {file_format!r}"})
    looks_like = formats.sniff(data)
    if file_format == "auto":
        file_format = looks_like or "jsonl"
    elif looks_like and looks_like != file_format:
        label = formats.FORMATS[looks_like].label
        raise CampaignImportError(
            [(0, f"this looks like {label}; import it with the format {looks_like!r}")]
        )
    if formats.FORMATS[file_format].read is None:
        return parse_jsonl(data, protocol, defaults, offset_unit, text_format)
    if offset_unit != "codepoint":
        # Each reader knows its tool's unit and converts its offsets itself.
        raise ValidationError({"offset_unit": f"{file_format} files set their own offset unit"})
    try:
        raw_items = formats.read_items(file_format, data, text_format=text_format)
    except formats.FormatError as exc:
        raise CampaignImportError([(0, str(exc))]) from None
    pair = google_mqm.language_pair_in_name(file_name) if file_format == "google-mqm" else None
    if pair and not defaults:
        src_lang, tgt_lang = pair.split("-")
        defaults = {"src_lang": src_lang, "tgt_lang": tgt_lang}
    return _normalize_dicts(protocol, raw_items, defaults, text_format=text_format)


def import_campaign(
    source: str | bytes | IO | Iterable,
    *,
    name: str,
    protocol: str,
    file_format: str = "jsonl",
    offset_unit: str = "codepoint",
    file_name: str = "",
    on_written: Callable[[Campaign], None] | None = None,
    **settings,
) -> Campaign:
    """Create a campaign from a file (text, bytes, a file or an iterable of lines); atomic.

    ``file_format`` is one of :data:`annotation.formats.FORMATS` (``jsonl`` by default, e.g.
    ``appraise``) or ``auto`` to sniff it; ``offset_unit`` (``codepoint`` or ``utf16``) is how
    a JSONL file's span offsets count (the other formats convert their own). With the setting
    ``text_format="html"`` the items' text is read as HTML: sanitised, kept in ``meta["html"]``,
    and offsets count its visible text (``annotation.html_text``, ADR 0033). Raises
    ``file_name`` (by default the name an upload or open file carries) gives a Google MQM TSV
    its languages when the settings do not (``mqm_ted_ende.tsv``). Raises
    :class:`CampaignImportError` with every bad line's (or item's) number and reason, or
    Django's ``ValidationError`` for bad settings (e.g. a name already taken); nothing is
    written then. ``on_written(campaign)`` runs inside the writing transaction (a background
    import marks its job done there).
    """
    check_new_campaign(name, protocol)
    defaults = {k: settings[k] for k in ("src_lang", "tgt_lang") if settings.get(k)}
    text_format = _text_format(settings)
    file_name = file_name or str(getattr(source, "name", "") or "")
    items = _items_in_format(
        _whole_file(source), file_format, protocol, defaults, offset_unit, text_format, file_name
    )
    with transaction.atomic():
        campaign = _new_campaign(name, protocol, settings, items[0])
        _create_items(campaign, items)
        if on_written is not None:
            on_written(campaign)
    return campaign


def check_new_campaign(name: str, protocol: str) -> None:
    """Django's ``ValidationError`` for an unknown protocol or a name already taken."""
    if not protocols.is_registered(protocol):
        raise ValidationError({"protocol": f"unknown protocol {protocol!r}"})
    if Campaign.objects.filter(name=name).exists():
        raise ValidationError({"name": f"a campaign named {name!r} already exists"})


def import_items(campaign: Campaign, source: str | bytes | IO | Iterable) -> list[Item]:
    """Append JSONL items to an existing campaign; atomic, errors as :func:`import_campaign`."""
    defaults = {"src_lang": campaign.src_lang, "tgt_lang": campaign.tgt_lang}
    items = parse_jsonl(source, campaign.protocol, defaults, text_format=campaign.text_format)
    with transaction.atomic():
        return _create_items(campaign, items)


def generate_attention_checks(
    campaign: Campaign, count: int, rng: np.random.Generator
) -> list[Item]:
    """Create up to ``count`` attention checks by corrupting a phrase of regular items.

    Each check copies a regular item, replaces one phrase of its target (see
    ``annotation/corruption.py``) and expects a span overlapping it and a score lower than the
    original's (``qc.check_result``). Checks are spread over the campaign's positions so that
    annotators who do only part of the campaign still meet them.
    """
    if not campaign.get_protocol().generated_checks:
        raise ValueError("attention checks are generated for esa and mqm campaigns only")
    regular = list(campaign.items.filter(kind=Item.Kind.REGULAR).order_by("position", "id"))
    if not regular:
        return []
    donors = [item.target for item in regular]
    order = rng.permutation(len(regular))
    positions = [item.position for item in regular]
    created: list[Item] = []
    with transaction.atomic():
        for index in order:
            if len(created) >= count:
                break
            original = regular[int(index)]
            result = corruption.corrupt(original.target, donors, rng)
            if result is None:
                continue
            created.append(
                Item(
                    campaign=campaign,
                    doc_id=original.doc_id,
                    seg_id=original.seg_id,
                    src_lang=original.src_lang,
                    tgt_lang=original.tgt_lang,
                    source=original.source,
                    target=result.text,
                    system=original.system,
                    kind=Item.Kind.ATTENTION_CHECK,
                    expected={
                        "type": "corrupted",
                        "original_item_id": original.pk,
                        "spans": [{"start": result.start, "end": result.end}],
                    },
                    origin="attention_check",
                    origin_ref=str(original.pk),
                    meta={"corrupted_phrase": result.original_phrase},
                    position=int(positions[int(rng.integers(0, len(positions)))]),
                )
            )
        Item.objects.bulk_create(created)
    return created
