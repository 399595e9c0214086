"""Write use-cases of the annotation app: import, sign-up, claiming, drafts, submission, reset.

Everything that changes annotation rows goes through here, from pages, the API, management
commands and other apps (which create campaigns with :func:`create_campaign` and listen to
``annotation.signals.item_completed``).
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import IO, Any

import numpy as np
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import (
    BigIntegerField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from annotation import (
    corruption,
    formats,
    hot_sql,
    html_text,
    languages,
    ordering,
    protocols,
    qc,
)
from annotation.formats import google_mqm, offsets
from annotation.models import Annotation, Annotator, Assignment, Campaign, Enrollment, Item
from annotation.signals import item_completed
from formats.jsonl import LineProblem, read_jsonl

IDLE_GAP_CAP_SECONDS = 60.0
"""Time between two signs of activity on an item counts at most this much (idle breaks)."""

_CANDIDATE_BATCH = 50
_LOCKED_RETRIES = 12
_MAX_REPORTED_ERRORS = 20


# --- errors ---------------------------------------------------------------------------------


class CampaignImportError(ValueError):
    """Items that cannot be imported; ``errors`` lists ``(line number, reason)``."""

    def __init__(self, errors: list[tuple[int, str]], *, unit: str = "line"):
        self.errors = errors
        self.unit = unit
        shown = "; ".join(f"{unit} {number}: {reason}" for number, reason in errors)
        super().__init__(f"nothing imported — {shown}")


class NotAllowed(Exception):
    """The annotator may not do this now; the message says why, in words for them."""


class EnrollmentBlocked(NotAllowed):
    """The annotator's enrollment does not allow working (pending, paused, rejected, none):
    pages and the API answer 403."""


class NotEnrolled(EnrollmentBlocked):
    """The annotator has no enrollment in the campaign at all; next-item answers 404, as for
    a campaign that does not exist."""


class RequirementNotMet(NotAllowed):
    """The declared languages do not meet the campaign's requirement; ``field`` is the form
    field the message is about. Nothing was written."""

    def __init__(self, message: str, field: str):
        self.field = field
        super().__init__(message)


class NameTaken(NotAllowed):
    """Another account has this username (two sign-ups with one name at once: the form checks
    first). ``code`` is the sign-up form's (``forms.NAME_TAKEN``), so the page counts it like
    the form's own."""

    field = "username"
    code = "name_taken"


class Excluded(NotAllowed):
    """The annotator takes part in another campaign of this one's exclusive group."""


class ItemFull(NotAllowed):
    """The item already has its ``overlap`` judgments (the annotator's claim had lapsed and
    someone else took the slot): pages and the API answer 409; nothing was counted."""


class AnswerInvalid(ValueError):
    """A submission that is not complete or not valid; nothing was saved."""

    def __init__(self, errors: list[str], missing: list[str]):
        self.errors = errors
        self.missing = missing
        super().__init__("; ".join(errors + missing))


# --- campaigns and items --------------------------------------------------------------------


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


def _create_items(campaign: Campaign, items: list[dict]) -> list[Item]:
    _check_prefill_severities(campaign, items)
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


# --- annotators and enrollment --------------------------------------------------------------


def enroll(annotator: Annotator, campaign: Campaign) -> Enrollment:
    """Enrol an annotator (idempotent); pending when the campaign requires approval."""
    status = Enrollment.Status.PENDING if campaign.require_approval else Enrollment.Status.APPROVED
    enrollment, _ = Enrollment.objects.get_or_create(
        campaign=campaign, annotator=annotator, defaults={"status": status}
    )
    return enrollment


def invite_matches(campaign: Campaign, invite_token: str) -> bool:
    """Whether ``invite_token`` is the campaign's; compared in constant time, so response
    timing does not reveal how much of a guess was right."""
    return secrets.compare_digest(
        (invite_token or "").encode("utf-8"), campaign.invite_token.encode("utf-8")
    )


def _check_signup(campaign: Campaign, invite_token: str) -> None:
    if campaign.signup_closed:
        raise NotAllowed("Sign-up for this campaign is closed.")
    if campaign.invite_token and not invite_matches(campaign, invite_token):
        raise NotAllowed("This sign-up link needs a valid invitation.")


@transaction.atomic
def sign_up(
    campaign: Campaign,
    *,
    username: str,
    password: str,
    email: str = "",
    display_name: str = "",
    native_language: str,
    working_languages: list[str],
    consent: bool,
    invite_token: str = "",
) -> tuple[Any, Annotator, Enrollment]:
    """Create an account and annotator profile through a campaign's public sign-up link."""
    _check_signup(campaign, invite_token)
    if not consent:
        raise NotAllowed("Consent is required to take part.")
    user_model = get_user_model()
    if user_model.objects.filter(username__iexact=username).exists():
        raise NameTaken("That name is taken; choose another.")
    user = user_model.objects.create_user(username=username, email=email, password=password)
    annotator = Annotator.objects.create(
        user=user,
        display_name=display_name or username,
        native_language=native_language,
        working_languages=working_languages,
        source=Annotator.Source.INVITE if campaign.invite_token else Annotator.Source.OPEN,
        consent_at=timezone.now(),
    )
    return user, annotator, admit(annotator, campaign)


@transaction.atomic
def join_campaign(
    user, campaign: Campaign, *, native_language: str = "", working_languages=None,
    consent: bool, invite_token: str = "",
) -> tuple[Annotator, Enrollment]:  # fmt: skip
    """An already logged-in user joins a campaign (creating their annotator profile if needed)."""
    _check_signup(campaign, invite_token)
    annotator = Annotator.objects.filter(user=user).first()
    if annotator is None:
        if not consent:
            raise NotAllowed("Consent is required to take part.")
        annotator = Annotator.objects.create(
            user=user,
            display_name=user.get_username(),
            native_language=native_language,
            working_languages=list(working_languages or []),
            source=Annotator.Source.INVITE if campaign.invite_token else Annotator.Source.OPEN,
            consent_at=timezone.now(),
        )
    else:
        _record_languages(annotator, native_language, working_languages)
    return annotator, admit(annotator, campaign)


def _record_languages(annotator: Annotator, native_language: str, working_languages) -> None:
    """Keep what the annotator declared on joining on their profile (the latest declaration
    wins); nothing given leaves the profile as it was."""
    changed = []
    if native_language and native_language != annotator.native_language:
        annotator.native_language = native_language
        changed.append("native_language")
    if working_languages and list(working_languages) != annotator.working_languages:
        annotator.working_languages = list(working_languages)
        changed.append("working_languages")
    if changed:
        annotator.save(update_fields=[*changed, "updated_at"])


def check_languages(annotator: Annotator, campaign: Campaign) -> None:
    """Raise :class:`RequirementNotMet` when the annotator's declared languages do not meet
    the campaign's requirement (annotation/languages.py)."""
    native = annotator.native_language
    problems = {
        "native_language": languages.native_problem(campaign.required_native_languages, native),
        "working_languages": languages.working_problem(
            campaign.required_working_languages, native, annotator.working_languages
        ),
    }
    for field_name, problem in problems.items():
        if problem:
            raise RequirementNotMet(problem, field_name)


def excluding_enrollment(annotator: Annotator, campaign: Campaign) -> Enrollment | None:
    """The annotator's enrollment in another campaign of ``campaign``'s exclusive group, which
    keeps them out of it; ``None`` when there is none. Any status counts: someone rejected or
    paused there has still seen that study's items. A Prolific participant is one annotator per
    PROLIFIC_PID (a unique constraint), so their second study finds the same row."""
    if not campaign.exclusive_group:
        return None
    return (
        Enrollment.objects.select_related("campaign")
        .filter(annotator=annotator, campaign__exclusive_group=campaign.exclusive_group)
        .exclude(campaign=campaign)
        .order_by("created_at")
        .first()
    )


def admit(annotator: Annotator, campaign: Campaign) -> Enrollment:
    """Enrol an annotator after checking the campaign's language requirement and exclusive
    group; idempotent (an existing enrollment is returned unchecked, so a later change of the
    requirement never locks out someone already working).

    The annotator's row is locked first: two joins by one annotator to two campaigns of one
    group (two tabs, a double click) run one after the other, and the second sees the first's
    enrollment. Call inside a transaction; a refusal raises :class:`NotAllowed`.
    """
    Annotator.objects.select_for_update().filter(pk=annotator.pk).values_list("pk").first()
    existing = Enrollment.objects.filter(campaign=campaign, annotator=annotator).first()
    if existing is not None:
        return existing
    check_admissible(annotator, campaign)
    return enroll(annotator, campaign)


def check_admissible(annotator: Annotator, campaign: Campaign) -> None:
    """Raise :class:`RequirementNotMet` or :class:`Excluded` when the annotator may not join
    ``campaign`` (its language requirement, its exclusive group)."""
    check_languages(annotator, campaign)
    other = excluding_enrollment(annotator, campaign)
    if other is not None:
        raise Excluded(
            f"You already take part in “{other.campaign.name}”, and the same person may not "
            f"take part in both it and “{campaign.name}”."
        )


def find_prolific_annotator(prolific_pid: str) -> Annotator | None:
    return (
        Annotator.objects.select_related("user")
        .filter(prolific_pid=prolific_pid, source=Annotator.Source.PROLIFIC)
        .first()
    )


@transaction.atomic
def prolific_sign_in(
    campaign: Campaign,
    *,
    prolific_pid: str,
    study_id: str = "",
    session_id: str = "",
    invite_token: str = "",
    native_language: str = "",
    working_languages=None,
    consent: bool = False,
    signed_in_as_participant: bool = False,
) -> tuple[Any, Annotator, Enrollment]:
    """Create or resume the annotator of a Prolific participant (no password).

    A new PROLIFIC_PID needs ``consent``. A PROLIFIC_PID is no secret (it is in every link the
    participant opens, and anyone can type one), so a known one resumes its annotator (and so
    their drafts) only with something only the participant holds: their own signed-in session
    (``signed_in_as_participant``: the session cookie issued at first entry), or the SESSION_ID
    that Prolific put in the link they first entered this campaign by. Only annotators created
    this way can be signed in by PID, never a staff or password account.
    """
    prolific_pid = prolific_pid.strip()
    session_id = session_id.strip()[:64]
    if not prolific_pid or len(prolific_pid) > 64:
        raise NotAllowed("The Prolific link is missing a valid PROLIFIC_PID.")
    annotator = find_prolific_annotator(prolific_pid)
    if annotator is None:
        _check_signup(campaign, invite_token)
        if not consent:
            raise NotAllowed("Consent is required to take part.")
        user_model = get_user_model()
        user = user_model(username=f"prolific-{prolific_pid}"[:150])
        user.set_unusable_password()
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:
            raise NotAllowed("This Prolific ID cannot be used here.") from None
        annotator = Annotator.objects.create(
            user=user,
            display_name="",
            native_language=native_language,
            working_languages=list(working_languages or []),
            source=Annotator.Source.PROLIFIC,
            prolific_pid=prolific_pid,
            consent_at=timezone.now(),
        )
    elif annotator.user.is_staff or annotator.user.has_usable_password():
        raise NotAllowed("This Prolific ID cannot be used here.")
    else:
        entered = Enrollment.objects.filter(campaign=campaign, annotator=annotator).first()
        if entered is None:
            _check_signup(campaign, invite_token)
        if not signed_in_as_participant and not _same_prolific_session(
            annotator, entered, session_id
        ):
            if entered is None:
                # The refusals that sign nobody in come first: whoever may not take part
                # learns why (and returns the study), whichever browser they use.
                check_admissible(annotator, campaign)
            raise NotAllowed(
                "This Prolific ID has already taken part here from another browser. Open the "
                "study from Prolific in the browser you used before, or contact the researcher."
            )
    annotator.study_id = study_id[:64]
    annotator.session_id = session_id
    annotator.save(update_fields=["study_id", "session_id", "updated_at"])
    enrollment = admit(annotator, campaign)
    if session_id and not enrollment.prolific_session_id:
        enrollment.prolific_session_id = session_id
        enrollment.save(update_fields=["prolific_session_id", "updated_at"])
    return annotator.user, annotator, enrollment


def _same_prolific_session(
    annotator: Annotator, enrollment: Enrollment | None, session_id: str
) -> bool:
    """Whether ``session_id`` is the one the annotator entered this campaign with. Enrollments
    made before the session was kept per campaign fall back to the annotator's last one."""
    if enrollment is None or not session_id:
        return False
    expected = enrollment.prolific_session_id or annotator.session_id
    return bool(expected) and secrets.compare_digest(
        session_id.encode("utf-8"), expected.encode("utf-8")
    )


def set_enrollment_status(enrollment: Enrollment, status: str) -> Enrollment:
    """Approve, pause, resume (approve) or reject one annotator in one campaign."""
    if status not in Enrollment.Status.values:
        raise ValueError(f"unknown enrollment status {status!r}")
    enrollment.status = status
    enrollment.save(update_fields=["status", "updated_at"])
    return enrollment


def set_qualified(enrollment: Enrollment, qualified: bool = True) -> Enrollment:
    enrollment.qualified = qualified
    enrollment.save(update_fields=["qualified", "updated_at"])
    return enrollment


@dataclass
class ResetResult:
    annotations: int = 0
    assignments: int = 0
    items_decremented: list[int] = field(default_factory=list)


@transaction.atomic
def reset_annotator_work(enrollment: Enrollment) -> ResetResult:
    """Delete one annotator's claims, drafts and annotations in one campaign, nobody else's.

    Item counters go down for the items they had submitted; the enrollment keeps its status but
    loses its qualification and finished mark, so the annotator starts again from scratch.
    Receivers of ``item_completed`` are not told (the signal is a one-way notification).
    """
    campaign, annotator = enrollment.campaign, enrollment.annotator
    mine = Annotation.objects.filter(campaign=campaign, annotator=annotator)
    claims = Assignment.objects.filter(campaign=campaign, annotator=annotator)
    submitted_items = list(
        mine.filter(status=Annotation.Status.SUBMITTED).values_list("item_id", flat=True)
    )
    # Their next-item requests wait (they lock the enrollment first too): no claim appears
    # while the claims are deleted.
    Enrollment.objects.select_for_update().filter(pk=enrollment.pk).first()
    claimed_items = list(claims.values_list("item_id", flat=True))
    result = ResetResult(items_decremented=submitted_items)
    # Lock the rows whose counters change (in id order, as every multi-row lock here) so a
    # concurrent submission cannot interleave.
    touched = sorted(set(submitted_items) | set(claimed_items))
    list(Item.objects.select_for_update().filter(pk__in=touched).order_by("pk").values_list("pk"))
    Item.objects.filter(pk__in=submitted_items, completed_count__gt=0).update(
        completed_count=F("completed_count") - 1
    )
    result.annotations = mine.delete()[1].get("annotation.Annotation", 0)
    result.assignments = claims.delete()[1].get("annotation.Assignment", 0)
    _recount_live_slots(touched)
    enrollment.qualified = False
    enrollment.finished_at = None
    enrollment.save(update_fields=["qualified", "finished_at", "updated_at"])
    return result


# --- claiming the next item -----------------------------------------------------------------


def _lock(queryset):
    """Row locks that skip rows another transaction holds (PostgreSQL); SQLite serializes
    writers with BEGIN IMMEDIATE instead, so the plain query is already safe there."""
    if connection.features.has_select_for_update_skip_locked:
        return queryset.select_for_update(skip_locked=True)
    return queryset


def _live_claims():
    return Q(status=Assignment.Status.ACTIVE) | Q(status=Assignment.Status.SUBMITTED)


def _recount_live_slots(item_ids: Iterable[int]) -> None:
    """Set the items' ``live_slots`` from their claims; callers hold the items' row locks."""
    live = (
        Assignment.objects.filter(_live_claims(), item=OuterRef("pk"))
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    Item.objects.filter(pk__in=list(item_ids)).update(
        live_slots=Coalesce(Subquery(live, output_field=IntegerField()), Value(0))
    )


def _release_lapsed(item_ids: list[int], now: datetime, keep: Annotator | None = None) -> int:
    """Release lapsed claims on these items (locked by the caller) and recount their slots;
    ``keep``'s own claim is left for it to resume. Returns how many claims were released."""
    lapsed = Assignment.objects.filter(
        item_id__in=item_ids, status=Assignment.Status.ACTIVE, expires_at__lte=now
    )
    if keep is not None:
        lapsed = lapsed.exclude(annotator=keep)
    released = lapsed.update(status=Assignment.Status.EXPIRED)
    if released:
        _recount_live_slots(item_ids)
    return released


def _release_lapsed_in_campaign(campaign: Campaign, now: datetime) -> int:
    """Free the slots of other annotators' lapsed claims on regular items of the campaign.

    Run only when no item is open, so an annotator who comes back before their slot is needed
    resumes it. Items another transaction holds are left for a later call.
    """
    lapsed_items = Assignment.objects.filter(
        campaign=campaign,
        status=Assignment.Status.ACTIVE,
        expires_at__lte=now,
        item__kind=Item.Kind.REGULAR,
    ).values("item_id")
    item_ids = list(
        _lock(Item.objects.filter(pk__in=lapsed_items).order_by("pk")).values_list("pk", flat=True)[
            :_CANDIDATE_BATCH
        ]
    )
    return _release_lapsed(item_ids, now) if item_ids else 0


def _initial_draft(item: Item) -> dict[str, Any]:
    if item.prefill_spans:
        return {"spans": [dict(span) for span in item.prefill_spans], "prefilled": True}
    return {}


@dataclass(frozen=True)
class Claim:
    """An item given to an annotator by next-item, with its annotation row when this claim
    created it (``None``: the row predates it, a kept draft or a resumed claim)."""

    item: Item
    annotator: Annotator
    new_annotation: Annotation | None = None


def _claim(annotator: Annotator, item: Item, campaign: Campaign, now: datetime) -> Claim | None:
    """Count the item's slot, only while one is free (``live_slots``; the caller holds the row
    lock, the condition guards the counter anyway), and record the claim and its draft; ``None``
    when the slot was gone (nothing changed).

    One upsert each: an expired claim of the same annotator on the item is reactivated, and an
    existing annotation (a draft kept from that claim) is left as it is.
    """
    option_order: list[int] = []
    if campaign.get_protocol().has_options:
        # Seeded by (annotator, item) so a reset annotator sees the same order again.
        option_order = list(range(len(item.choices)))
        random.Random(f"{annotator.pk}:{item.pk}").shuffle(option_order)
    draft = Annotation(
        item=item,
        annotator=annotator,
        campaign=campaign,
        draft=_initial_draft(item),
        option_order=option_order,
        last_activity_at=now,
    )
    inserted = hot_sql.claim_with_draft(item, draft, campaign.overlap, now)
    if inserted is None:
        return None
    return Claim(item, annotator, draft if inserted else None)


_ENROLLMENT_REFUSALS: dict[str, str] = {
    Enrollment.Status.PENDING: "Your sign-up is waiting for approval.",
    Enrollment.Status.PAUSED: "Your work on this campaign is paused by the organisers.",
    Enrollment.Status.REJECTED: "You cannot take part in this campaign.",
}


def _check_enrollment(enrollment: Enrollment | None) -> None:
    """Raise :class:`EnrollmentBlocked` unless the enrollment is approved."""
    _check_enrollment_status(None if enrollment is None else enrollment.status)


def _check_enrollment_status(status: str | None) -> None:
    if status is None:
        raise NotEnrolled("You are not enrolled in this campaign.")
    refusal = _ENROLLMENT_REFUSALS.get(status)
    if refusal:
        raise EnrollmentBlocked(refusal)


def _approved_enrollment(
    campaign_id: int, user_id: int | None, annotator_id: int | None, campaign: Campaign | None
) -> Enrollment:
    """The enrollment of the annotator (or of the user's annotator profile) in the campaign,
    locked by the query that reads it with its campaign and annotator; refused unless it is
    approved and its campaign (``campaign``, or the one read with it) is open."""
    enrollment = hot_sql.locked_enrollment(campaign_id, user_id=user_id, annotator_id=annotator_id)
    _check_enrollment(enrollment)
    assert enrollment is not None  # _check_enrollment refused a missing one
    if (campaign or enrollment.campaign).status != Campaign.Status.OPEN:
        raise NotAllowed("This campaign is not open for annotation.")
    return enrollment


def _resume(annotator: Annotator, campaign: Campaign, now: datetime) -> Item | None:
    open_claims = Assignment.objects.filter(
        campaign=campaign, annotator=annotator, status=Assignment.Status.ACTIVE
    ).select_related("item")
    renewed = now + timedelta(seconds=campaign.claim_ttl_seconds)
    for assignment in open_claims.order_by("claimed_at", "id"):
        item = assignment.item
        if assignment.expires_at > now or item.is_per_annotator:
            Assignment.objects.filter(pk=assignment.pk).update(expires_at=renewed)
            return item
        # The claim lapsed: keep it only if the slot is still free. The item lock is waited
        # for (one row, held for one claim) so that the counter and the claim change together.
        locked = Item.objects.select_for_update().get(pk=item.pk)
        _release_lapsed([item.pk], now, keep=annotator)
        locked.refresh_from_db(fields=["live_slots"])
        still_mine = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ACTIVE)
        # live_slots counts this claim too.
        if locked.live_slots <= campaign.overlap:
            if still_mine.update(expires_at=renewed):
                return item
            continue
        if still_mine.update(status=Assignment.Status.EXPIRED):
            Item.objects.filter(pk=item.pk).update(live_slots=F("live_slots") - 1)
    return None


def _claims_and_tutorial(annotator: Annotator, campaign: Campaign) -> tuple[bool, int | None]:
    """(whether the annotator holds an active claim in the campaign, the id of the first
    tutorial item they have never claimed), in one statement: most requests have neither, and
    then need no further query for them. Read after the enrollment is locked, so both are
    current: claims of theirs are created (and deleted, by a reset) only under that lock;
    others may release an active one meanwhile, which :func:`_resume` checks again.

    Hand-written (:mod:`annotation.hot_sql`): the ORM would compile these two nested
    subqueries again on every request, which cost more CPU than any other statement of
    next-item (bench/README.md, "Annotation load").
    """
    return hot_sql.claims_and_tutorial(annotator.pk, campaign.pk)


def _tutorial_phase(
    annotator: Annotator,
    campaign: Campaign,
    enrollment: Enrollment,
    now: datetime,
    pending_id: int | None,
) -> tuple[bool, Claim | None, str]:
    """(still in tutorial phase, claim, refusal). Tutorials come first (``pending_id``, the
    first one not claimed yet); passing them may be required. A refusal is returned, not
    raised, so that the rejection it records commits."""
    if pending_id is not None:
        pending = Item.objects.get(pk=pending_id)
        # A tutorial is per annotator: it always has a slot.
        return True, _claim(annotator, pending, campaign, now), ""
    if campaign.require_qualification and not enrollment.qualified:
        outcome = qc.qualification_result(enrollment)
        if outcome is None:
            return (
                True,
                None,
                ("This campaign needs a qualification; the organisers will review your work."),
            )
        enrollment.qualified = outcome
        if not outcome:
            enrollment.status = Enrollment.Status.REJECTED
        enrollment.save(update_fields=["qualified", "status", "updated_at"])
        if not outcome:
            return True, None, "You did not pass the qualification for this campaign."
    return False, None, ""


def _reached_quota(annotator: Annotator, campaign: Campaign) -> bool:
    if not campaign.max_items_per_annotator:
        return False
    taken = (
        Assignment.objects.filter(campaign=campaign, annotator=annotator)
        .exclude(item__kind=Item.Kind.TUTORIAL)
        .filter(status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED])
        .count()
    )
    return taken >= campaign.max_items_per_annotator


def next_item_for(annotator: Annotator, campaign: Campaign, *, now=None) -> Item | None:
    """Claim (or resume) the annotator's next item in a campaign; ``None`` when they are done.

    Concurrency-safe (STYLE 10):

    1. The annotator's enrollment row is locked, so one annotator's parallel requests queue.
    2. An open claim of theirs is resumed first (renewed if it lapsed and the slot is free).
    3. Tutorials come first; with ``require_qualification`` they must be passed.
    4. Candidates are items they have no live claim on, in position order (or, when the
       campaign shuffles items, in the annotator's seeded permutation: ``annotation/ordering.py``,
       computed inside the same query); regular items need
       ``live_slots < overlap`` (active + submitted claims, a counter on the item). The first
       candidate row nobody else holds is locked (``FOR UPDATE SKIP LOCKED``) and its counter
       raised only while below the overlap, so two annotators never take the last slot twice
       and the work does not grow with the number of annotators. Lapsed claims of others are
       released when nothing else is open (see :func:`_claim_open_item`).
    5. The claim is an ``Assignment`` (unique per item and annotator) expiring after the
       campaign's ``claim_ttl_seconds`` unless activity renews it; the annotation row (the draft)
       is created with it, choice options shuffled and the order recorded.

    Returns ``None`` when nothing is left for the annotator — then ``enrollment.finished_at``
    is set — or when the remaining slots are all held by other annotators' live claims (then it
    is not set: try again later). Raises :class:`NotAllowed` when the enrollment or campaign
    does not allow annotating.
    """
    claim = _next_claim(campaign.pk, now or timezone.now(), annotator=annotator, campaign=campaign)
    return None if claim is None else claim.item


def next_claim(campaign_id: int, user_id: int, *, now=None) -> Claim | None:
    """:func:`next_item_for` for the user's own enrollment in the campaign (its annotator
    matched through the user, ``access.own_enrollment_key``), read with its campaign and
    annotator by the query that locks it; raises :class:`NotEnrolled` when there is none. The
    claim carries the annotation row when it created it (else read it:
    :func:`claimed_annotation`)."""
    return _next_claim(campaign_id, now or timezone.now(), user_id=user_id)


def claimed_annotation(claim: Claim) -> Annotation:
    """The annotation row of a claimed item: the one the claim created, else read (a draft
    kept from an earlier claim, a resumed claim)."""
    if claim.new_annotation is not None:
        return claim.new_annotation
    return Annotation.objects.get(item=claim.item, annotator=claim.annotator)


def _next_claim(
    campaign_id: int,
    now: datetime,
    *,
    user_id: int | None = None,
    annotator: Annotator | None = None,
    campaign: Campaign | None = None,
) -> Claim | None:
    """:func:`next_item_for` for the enrollment of the user's annotator profile (``user_id``)
    or of ``annotator``; ``annotator`` and ``campaign`` are the caller's objects, else the
    ones read with the enrollment."""
    with transaction.atomic():
        enrollment = _approved_enrollment(
            campaign_id, user_id, None if annotator is None else annotator.pk, campaign
        )
        claim, refusal = _claim_next(
            annotator or enrollment.annotator, campaign or enrollment.campaign, enrollment, now
        )
    if refusal:
        raise NotAllowed(refusal)
    return claim


def _claim_next(
    annotator: Annotator, campaign: Campaign, enrollment: Enrollment, now: datetime
) -> tuple[Claim | None, str]:
    """The body of :func:`next_item_for` under the enrollment lock: (claim, refusal)."""
    has_claim, tutorial_id = _claims_and_tutorial(annotator, campaign)
    if has_claim:
        resumed = _resume(annotator, campaign, now)
        if resumed is not None:
            return Claim(resumed, annotator), ""
    in_tutorial, claim, refusal = _tutorial_phase(annotator, campaign, enrollment, now, tutorial_id)
    if in_tutorial:
        return claim, refusal
    if not _reached_quota(annotator, campaign):
        seed = order_seed(enrollment, campaign)
        claim = _claim_open_item(annotator, campaign, now, seed)
        if claim is not None:
            return claim, ""
        if _unfinished(annotator, campaign).exists():
            # Items are left but others hold their last slots: not finished, try later.
            return None, ""
    if enrollment.finished_at is None:
        Enrollment.objects.filter(pk=enrollment.pk).update(finished_at=now)
    return None, ""


def _claimed_by(annotator: Annotator) -> Exists:
    """The item has a live claim of this annotator (they never get an item twice)."""
    return Exists(
        Assignment.objects.filter(
            item=OuterRef("pk"),
            annotator=annotator,
            status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED],
        )
    )


def _unfinished(annotator: Annotator, campaign: Campaign):
    """Items the annotator could still get once others' claims are submitted or released."""
    return (
        Item.objects.filter(campaign=campaign)
        .filter(
            Q(kind=Item.Kind.REGULAR, completed_count__lt=campaign.overlap)
            | Q(kind=Item.Kind.ATTENTION_CHECK)
        )
        .exclude(_claimed_by(annotator))
    )


def _rank_expression(seed: int) -> ExpressionWrapper:
    """``ordering.item_rank(id, seed)`` in SQL (SQLite and PostgreSQL); see annotation/ordering.py.
    The id is cast to a 64-bit integer so no step overflows a 32-bit column type."""
    s1, a, s2, b = ordering.hash_params(seed)
    prime = ordering.PRIME
    x = (Cast("id", BigIntegerField()) % prime).bitxor(s1) * a % prime
    return ExpressionWrapper(x.bitxor(s2) * b % prime, output_field=BigIntegerField())


def item_order(seed: int | None) -> tuple[Any, ...]:
    """The ``order_by`` of an annotator's items: position, or their permutation (shuffle on)."""
    if seed is None:
        return ("position", "id")
    return (_rank_expression(seed), "position", "id")


def _open(annotator: Annotator, campaign: Campaign, seed: int | None = None):
    """Items with a free slot for the annotator now, in their order (:func:`item_order`)."""
    return (
        Item.objects.filter(campaign=campaign)
        .filter(
            Q(kind=Item.Kind.REGULAR, live_slots__lt=campaign.overlap)
            | Q(kind=Item.Kind.ATTENTION_CHECK)
        )
        .exclude(_claimed_by(annotator))
        .order_by(*item_order(seed))
    )


def order_seed(enrollment: Enrollment, campaign: Campaign) -> int | None:
    """The annotator's item-order seed when the campaign shuffles items (``None`` otherwise),
    derived from (campaign seed, annotator) on first use and stored on the enrollment."""
    if not campaign.shuffle_items:
        return None
    if enrollment.item_order_seed is None:
        seed = ordering.annotator_seed(campaign.item_order_seed, enrollment.annotator_id)
        Enrollment.objects.filter(pk=enrollment.pk, item_order_seed__isnull=True).update(
            item_order_seed=seed
        )
        enrollment.refresh_from_db(fields=["item_order_seed"])
    return enrollment.item_order_seed


def _claim_open_item(
    annotator: Annotator, campaign: Campaign, now: datetime, seed: int | None = None
) -> Claim | None:
    """Claim the first open item in the annotator's order: one locking query and one
    conditional counter update, whatever the number of annotators.

    1. The first open item that no other transaction holds is locked
       (``SELECT ... LIMIT 1 FOR UPDATE SKIP LOCKED``): claimers never wait for each other and
       a transaction holds only the row it claims.
    2. Its ``live_slots`` goes up by one only while below the overlap.
    3. When nothing is open, other annotators' lapsed claims are released and (if any were)
       the claim is tried again. When open items exist but others hold all their rows for a
       moment, it is retried briefly (20–240 ms) rather than blocking: READ COMMITTED sees
       their commits.
    """
    for attempt in range(_LOCKED_RETRIES + 1):
        item = _first_open_item(annotator, campaign, seed)
        if item is not None:
            claim = _claim(annotator, item, campaign, now)
            if claim is not None:
                return claim
        elif _release_lapsed_in_campaign(campaign, now):
            continue
        elif not (
            connection.features.has_select_for_update_skip_locked
            and _open(annotator, campaign).exists()
        ):
            return None
        time.sleep(0.02 * (attempt + 1))
    return None


def _first_open_item(annotator: Annotator, campaign: Campaign, seed: int | None) -> Item | None:
    """The first open item in the annotator's order that no other transaction holds, locked.
    In position order with a small overlap (nearly every campaign), one ordered index scan per
    stream of candidates (``hot_sql.first_open_item``); in a shuffled order, or with a large
    overlap, the ORM's query, which reads and sorts all the campaign's open items."""
    if seed is None and campaign.overlap <= hot_sql.STREAMED_OVERLAP_MAX:
        return hot_sql.first_open_item(campaign, annotator.pk)
    return _lock(_open(annotator, campaign, seed)).first()


# --- drafts, activity and submission --------------------------------------------------------


def clean_answer(campaign: Campaign, item: Item, answer: Any):
    """The campaign's protocol cleans ``answer`` with the campaign's and item's settings."""
    protocol = campaign.get_protocol()
    return protocol.clean(answer, protocol.answer_context(campaign, item))


def _add_activity(annotation: Annotation, now: datetime) -> float:
    gap = (now - annotation.last_activity_at).total_seconds()
    return round(annotation.time_spent_seconds + min(max(gap, 0.0), IDLE_GAP_CAP_SECONDS), 3)


def _locked_annotation(annotator: Annotator, item: Item) -> Annotation:
    annotation = (
        # of=("self",): locking the joined campaign row too would serialize (and deadlock)
        # every submission of the campaign against the claims inserting rows that point to it.
        Annotation.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .filter(item=item, annotator=annotator)
        .first()
    )
    if annotation is None:
        raise NotAllowed("This item is not assigned to you.")
    return annotation


def _enrollment_of(annotator: Annotator, campaign: Campaign) -> Enrollment | None:
    # A claim outlives a change of status: a paused or rejected annotator still holds the
    # items claimed before, so every write on them checks the enrollment again.
    return Enrollment.objects.filter(campaign=campaign, annotator=annotator).first()


def _renew_claim(annotation: Annotation, now: datetime) -> None:
    # Only a claim still held is renewed: a released one gave its slot back (live_slots), and
    # taking it again needs the item lock, which autosaves do not take. Its draft is kept and
    # its submission is still counted if the item has room (submit_annotation).
    Assignment.objects.filter(
        item_id=annotation.item_id,
        annotator_id=annotation.annotator_id,
        status=Assignment.Status.ACTIVE,
    ).update(expires_at=now + timedelta(seconds=annotation.campaign.claim_ttl_seconds))


def start_viewing(annotator: Annotator, item: Item, *, now=None) -> Annotation:
    """The annotator opened the item: activity starts now (time before this is not counted)."""
    now = now or timezone.now()
    with transaction.atomic():
        annotation = _locked_annotation(annotator, item)
        annotation.last_activity_at = now
        annotation.save(update_fields=["last_activity_at"])
    return annotation


def record_activity(annotator: Annotator, item: Item, *, now=None) -> Annotation:
    """A heartbeat while the annotator works: adds the gap since the last one, capped."""
    now = now or timezone.now()
    with transaction.atomic():
        annotation = _locked_annotation(annotator, item)
        annotation.time_spent_seconds = _add_activity(annotation, now)
        annotation.last_activity_at = now
        annotation.save(update_fields=["time_spent_seconds", "last_activity_at"])
        if not annotation.is_submitted:
            _renew_claim(annotation, now)
    return annotation


def save_draft(
    annotator: Annotator, item: Item, draft: Any, *, now=None
) -> tuple[Annotation, list[str]]:
    """Autosave the annotator's working copy of their answer; returns (annotation, missing).

    Incomplete drafts are fine (``missing`` says what a submission still needs); invalid values
    raise :class:`AnswerInvalid` and save nothing. Saving counts as activity and renews the
    claim. On a submitted annotation the draft holds a revision in progress; the submitted
    ``answer`` changes only when it is submitted again.
    """
    now = now or timezone.now()
    with transaction.atomic():
        annotation = _locked_annotation(annotator, item)
        campaign = annotation.campaign
        _check_enrollment(_enrollment_of(annotator, campaign))
        if annotation.is_submitted and not campaign.is_open:
            raise NotAllowed("This campaign is closed; submissions can no longer change.")
        cleaned, errors, missing = clean_answer(campaign, item, draft)
        if errors:
            raise AnswerInvalid(errors, [])
        annotation.draft = cleaned
        annotation.time_spent_seconds = _add_activity(annotation, now)
        annotation.last_activity_at = now
        annotation.save(
            update_fields=["draft", "time_spent_seconds", "last_activity_at", "updated_at"]
        )
        if not annotation.is_submitted:
            _renew_claim(annotation, now)
    return annotation, missing


def compute_scores(
    campaign: Campaign, answer: Mapping[str, Any]
) -> tuple[float | None, float | None]:
    """(score on 0–100, raw MQM penalty) of a cleaned answer."""
    return campaign.get_protocol().submission_scores(campaign, answer)


@dataclass
class SubmitResult:
    annotation: Annotation
    created: bool
    """True for the first submission of this annotation, False for revisions and replays."""
    replayed: bool = False
    """True when the idempotency key was seen before: nothing changed."""


def submit_annotation(
    annotator: Annotator,
    item: Item,
    answer: Any,
    *,
    idempotency_key: str = "",
    now=None,
) -> SubmitResult:
    """Submit (or revise) the annotator's answer for an item they claimed; idempotent.

    1. A request whose ``idempotency_key`` was already used by this annotator returns the
       annotation it produced and changes nothing (retries, double clicks, replayed API calls).
    2. The (item, annotator) annotation row is locked; it exists since the claim, so a double
       submit with different keys can only update it, never create a second annotation.
    3. The answer must be complete and valid (:class:`AnswerInvalid` lists what is wrong or
       missing); the score is computed (``annotation/scoring.py`` for MQM).
    4. The first submission marks the claim submitted and adds one to ``item.completed_count``
       with an ``F()`` update; when a regular item reaches the overlap, ``item_completed`` is
       sent after commit. Later submissions are revisions (allowed while the campaign is open).
    5. The first submission of a regular item is counted under the item's row lock: when the
       item already has its ``overlap`` judgments (this annotator's claim lapsed and another
       took the slot), it is refused with :class:`ItemFull`, their claim is released and
       nothing is counted, so an overlap-1 item is never paid for twice.
    6. Only an approved enrollment may submit (:class:`EnrollmentBlocked` otherwise), whatever
       it held before its status changed.
    """
    now = now or timezone.now()
    key = (idempotency_key or "").strip()[:64]
    with transaction.atomic():
        full = _submit_locked(annotator, item, answer, key, now)
        if isinstance(full, SubmitResult):
            return full
        # Released in the refused submission's transaction (still holding the item lock);
        # raised once it is committed.
        released = Assignment.objects.filter(
            item=item, annotator=annotator, status=Assignment.Status.ACTIVE
        ).update(status=Assignment.Status.EXPIRED)
        if released:
            Item.objects.filter(pk=item.pk).update(live_slots=F("live_slots") - 1)
    raise ItemFull(full)


@dataclass(frozen=True)
class _SubmitChecks:
    """What a submission checks besides the annotation, read in the query that locks it."""

    enrollment_status: str | None
    claim_status: str | None
    key_item_id: int | None
    """The item the idempotency key was first used for, if it was."""


def _locked_for_submit(
    annotator: Annotator, item: Item, key: str
) -> tuple[Annotation, _SubmitChecks]:
    """The annotation row, locked, with its campaign, the enrollment's status, the claim's
    status and the item a given idempotency key was first used for, in one query.

    Hand-written (:mod:`annotation.hot_sql`): compiled by the ORM, this query of three
    subqueries cost more CPU than any other statement of a submission.
    """
    found = hot_sql.locked_for_submit(item.pk, annotator.pk, key)
    if found is None:
        raise NotAllowed("This item is not assigned to you.")
    annotation, enrollment_status, claim_status, key_item_id = found
    annotation.annotator = annotator  # the caller's object: no query when it is read again
    return annotation, _SubmitChecks(enrollment_status, claim_status, key_item_id)


def _submit_locked(
    annotator: Annotator, item: Item, answer: Any, key: str, now: datetime
) -> SubmitResult | str:
    """:func:`submit_annotation` inside its transaction; a string is an :class:`ItemFull`
    refusal, returned (not raised) so that releasing the claim commits."""
    # The item first, then the annotation: the order every writer of both takes
    # (claiming locks the item, then creates the annotation; a reset locks items first).
    # Checks and tutorials are not limited by the overlap: no need to queue their submissions.
    locked_item = item if item.is_per_annotator else hot_sql.locked_item(item.pk)
    annotation, checks = _locked_for_submit(annotator, item, key)
    campaign = annotation.campaign
    if checks.key_item_id not in (None, item.pk):
        raise NotAllowed("This idempotency key was used for another item.")
    # The row's own key is read fresh after the lock wait (the subquery may predate it).
    if key and (checks.key_item_id == item.pk or annotation.idempotency_key == key):
        return SubmitResult(annotation, created=False, replayed=True)
    _check_enrollment_status(checks.enrollment_status)
    if not campaign.is_open:
        raise NotAllowed("This campaign is not open; nothing was submitted.")
    cleaned, errors, missing = clean_answer(campaign, item, answer)
    if errors or missing:
        raise AnswerInvalid(errors, missing)
    score, penalty = compute_scores(campaign, cleaned)
    first = not annotation.is_submitted
    if (
        first
        and locked_item.kind == Item.Kind.REGULAR
        and locked_item.completed_count >= campaign.overlap
    ):
        return (
            "This item already has all the judgments it needs (your claim on it had lapsed "
            "and someone else took it); your answer was not counted. Go on to the next item."
        )
    annotation.answer = cleaned
    annotation.draft = cleaned
    annotation.score = score
    annotation.mqm_score = penalty
    annotation.time_spent_seconds = _add_activity(annotation, now)
    annotation.last_activity_at = now
    annotation.revision += 1
    # The first key stays: a late retry of the first submission must replay, not revert a
    # later revision. A retried revision re-applies the same answer, which is harmless.
    if key and not annotation.idempotency_key:
        annotation.idempotency_key = key
    if not first:
        hot_sql.save_submission(annotation)
        return SubmitResult(annotation, created=False)
    annotation.status = Annotation.Status.SUBMITTED
    annotation.submitted_at = now
    # A released claim (lapsed, or refused once) takes its slot back when it submits.
    regained = 0 if checks.claim_status == Assignment.Status.ACTIVE else 1
    hot_sql.save_first_submission(annotation, regained)
    # Read under the item lock for regular items, the only ones that complete.
    if item.kind == Item.Kind.REGULAR and locked_item.completed_count + 1 == campaign.overlap:
        _send_completed_on_commit(locked_item, campaign, regained)
    return SubmitResult(annotation, created=first)


def _send_completed_on_commit(locked_item: Item, campaign: Campaign, regained: int) -> None:
    """Send ``item_completed`` once the submission commits, with the item as it commits: the
    row read under its lock with this submission's counter updates (no query to read it
    again; receivers read ``origin``, ``origin_ref``, ``campaign`` and its annotations)."""
    locked_item.completed_count += 1
    locked_item.live_slots += regained
    locked_item.campaign = campaign
    transaction.on_commit(lambda: item_completed.send(sender=Item, item=locked_item))
