"""Annotators and their enrollments: sign-up, joining with an account, Prolific sign-in,
language requirements and exclusive groups, and the organisers' actions (status, qualification,
resetting one annotator's work).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation import languages
from annotation.models import Annotation, Annotator, Assignment, Campaign, Enrollment, Item
from annotation.refusals import Excluded, NameTaken, NotAllowed, RequirementNotMet
from annotation.services.claims import recount_live_slots


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
    recount_live_slots(touched)
    enrollment.qualified = False
    enrollment.finished_at = None
    enrollment.save(update_fields=["qualified", "finished_at", "updated_at"])
    return result
