"""What the annotation app refuses, and the HTTP status each refusal answers with.

Services raise these; pages and the API turn them into responses through :func:`http_status`,
one table for both, so that a refusal means the same status wherever it is met (ADR 0047).
"""

from __future__ import annotations

from http import HTTPStatus


class CampaignImportError(ValueError):
    """Items that cannot be imported; ``errors`` lists ``(line number, reason)``. Not in
    :data:`HTTP_STATUS`: a bad file is bad input, which the import form answers 422 and the API
    400, as every form and every import endpoint does."""

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


class AnswerInvalid(ValueError):
    """A submission that is not complete or not valid; nothing was saved."""

    def __init__(self, errors: list[str], missing: list[str]):
        self.errors = errors
        self.missing = missing
        super().__init__("; ".join(errors + missing))


# The status of each refusal, for pages and the API alike; a class not listed answers as its
# nearest listed parent. Who may not work now gets 403; an answer that is wrong or incomplete
# is well-formed but unprocessable (422); no enrollment at all is a 404, as for a campaign that
# does not exist. A finished answer is never refused for lack of room on its item (a lapsed
# claim submitted late is kept above the overlap, ADR 0049).
HTTP_STATUS: dict[type[Exception], HTTPStatus] = {
    AnswerInvalid: HTTPStatus.UNPROCESSABLE_ENTITY,
    NotEnrolled: HTTPStatus.NOT_FOUND,
    NotAllowed: HTTPStatus.FORBIDDEN,
}


def http_status(refusal: NotAllowed | AnswerInvalid) -> int:
    """The HTTP status a page or the API answers ``refusal`` with (:data:`HTTP_STATUS`)."""
    for kind in type(refusal).__mro__:
        if kind in HTTP_STATUS:
            return HTTP_STATUS[kind].value
    raise TypeError(f"{type(refusal).__name__} is not a refusal")


def reasons(refusal: NotAllowed | AnswerInvalid) -> tuple[list[str], list[str]]:
    """What is wrong and what is missing, as a page or the API lists them: an invalid answer's
    own lists, or a refusal's one sentence."""
    if isinstance(refusal, AnswerInvalid):
        return refusal.errors, refusal.missing
    return [str(refusal)], []
