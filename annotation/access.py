"""One permission-checked accessor per object type, shared by pages, the API and exports.

Every lookup by id from a request goes through here. A user who may not see an object gets
``Http404`` exactly as if it did not exist, so ids of other annotators' items, annotations or
campaigns they are not enrolled in never leak. The ``*_visible_to`` querysets give list views
and DRF ``get_queryset`` the same scoping.

Rules: staff see and manage everything. An annotator sees the campaigns they are enrolled in,
the items they have claimed (an ``Assignment``), and only their own annotations.
"""

from __future__ import annotations

from typing import TypeVar

from django.core.exceptions import ObjectDoesNotExist
from django.db import connection
from django.db.models import Model, QuerySet
from django.http import Http404

from annotation.models import Annotation, Annotator, Assignment, Campaign, Enrollment, Item
from core.rows import Columns, fetch_one, quote

_M = TypeVar("_M", bound=Model)


def _is_staff(user) -> bool:
    return _active(user) and bool(user.is_staff)


def _active(user) -> bool:
    """A signed-in, active account (anonymous and deactivated users see no annotator data)."""
    return bool(user and user.is_authenticated and user.is_active)


def annotator_for_user(user) -> Annotator | None:
    """The user's annotator profile, or ``None`` (anonymous users and staff without one)."""
    if not _active(user):
        return None
    try:
        return user.annotator
    except Annotator.DoesNotExist:
        return None


# --- querysets ------------------------------------------------------------------------------


def campaigns_visible_to(user) -> QuerySet[Campaign]:
    return _visible_to(user, Campaign.objects.all(), "enrollments__annotator")


def items_visible_to(user) -> QuerySet[Item]:
    return _visible_to(user, Item.objects.all(), "assignments__annotator")


def annotations_visible_to(user) -> QuerySet[Annotation]:
    return _visible_to(user, Annotation.objects.all(), "annotator")


def annotators_visible_to(user) -> QuerySet[Annotator]:
    return _visible_to(user, Annotator.objects.all(), "pk")


def _visible_to(user, rows: QuerySet[_M], mine: str) -> QuerySet[_M]:
    """Every row for staff, an annotator's own (``mine`` is the lookup that names them), and
    none for anyone else."""
    if _is_staff(user):
        return rows
    annotator = annotator_for_user(user)
    if annotator is None:
        return rows.none()
    return rows.filter(**{mine: annotator.pk})


# --- staff ----------------------------------------------------------------------------------


def campaign_for_admin(user, campaign_id) -> Campaign:
    """A campaign an admin may manage (import, settings, dashboard, exports)."""
    return _for_admin(user, Campaign.objects.all(), campaign_id, "campaign")


def enrollment_for_admin(user, enrollment_id) -> Enrollment:
    rows = Enrollment.objects.select_related("campaign", "annotator")
    return _for_admin(user, rows, enrollment_id, "enrollment")


def annotator_for_admin(user, annotator_id) -> Annotator:
    return _for_admin(user, Annotator.objects.select_related("user"), annotator_id, "annotator")


def item_for_admin(user, item_id) -> Item:
    return _for_admin(user, Item.objects.select_related("campaign"), item_id, "item")


def _for_admin(user, rows: QuerySet[_M], pk, noun: str) -> _M:
    """The row with this id for staff; for anyone else, or an id that names none, a 404."""
    if not _is_staff(user):
        raise Http404(f"No such {noun}")
    try:
        return rows.get(pk=pk)
    except (ObjectDoesNotExist, ValueError, TypeError):
        raise Http404(f"No such {noun}") from None


# --- annotators -----------------------------------------------------------------------------


def _request_id(value) -> int | None:
    """An id from a request as a number, or ``None`` when it cannot be one: not a number, or
    beyond the ids' integer range (SQLite refuses such a parameter outright, so it is never
    sent: the caller answers 404 as for any id it does not find)."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    low, high = connection.ops.integer_field_range("BigAutoField")
    return number if low <= number <= high else None


def own_enrollment_key(user, campaign_id) -> tuple[int, int] | None:
    """(campaign id, user id) of the user's own enrollment in a campaign, as next-item looks it
    up (``services.next_claim``: the annotator matched through its user in the query that
    locks the enrollment); ``None`` for anonymous and inactive users and for ids that cannot
    be ids."""
    campaign_id = _request_id(campaign_id)
    if campaign_id is None or not _active(user):
        return None
    return campaign_id, user.pk


def enrollment_lookup(user, campaign_id) -> QuerySet[Enrollment]:
    """The user's own enrollment in a campaign (any status), with its campaign and annotator,
    as a query: empty for anonymous and inactive users and for ids that cannot be ids. The
    annotator is matched through its user in the same query (no separate profile lookup)."""
    key = own_enrollment_key(user, campaign_id)
    if key is None:
        return Enrollment.objects.none()
    return Enrollment.objects.select_related("campaign", "annotator").filter(
        campaign_id=key[0], annotator__user=user
    )


def enrollment_for_annotator(user, campaign_id) -> Enrollment:
    """The user's own enrollment in a campaign (any status); 404 if they are not enrolled."""
    try:
        return enrollment_lookup(user, campaign_id).get()
    except Enrollment.DoesNotExist:
        raise Http404("No such campaign") from None


def item_for_annotator(user, item_id) -> tuple[Item, Assignment]:
    """An item the user has claimed, with their claim (its ``annotator`` loaded) and the item's
    campaign; 404 for any other item. The annotator is matched through its user in the same
    query, hand-written (:mod:`core.rows`): every submission and autosave starts here.
    """
    item_id = _request_id(item_id)
    if item_id is None or not _active(user):
        raise Http404("No such item")
    row = fetch_one(_CLAIM_OF_USER_SQL, [item_id, user.pk])
    if row is None:
        raise Http404("No such item")
    assignment = _CLAIM.instance(row)
    item = _CLAIMED_ITEM.instance(row, _CLAIM.width)
    item.campaign = _CLAIMED_CAMPAIGN.instance(row, _CLAIM.width + _CLAIMED_ITEM.width)
    assignment.item = item
    assignment.annotator = _CLAIMANT.instance(row, len(row) - _CLAIMANT.width)
    return item, assignment


_CLAIM = Columns(Assignment, "claim")
_CLAIMED_ITEM = Columns(Item, "item")
_CLAIMED_CAMPAIGN = Columns(Campaign, "campaign")
_CLAIMANT = Columns(Annotator, "annotator")

# One claim per (item, annotator) (annotation_assignment_unique): at most one row.
_CLAIM_OF_USER_SQL = f"""
SELECT {_CLAIM.sql}, {_CLAIMED_ITEM.sql}, {_CLAIMED_CAMPAIGN.sql}, {_CLAIMANT.sql}
FROM {quote(Assignment._meta.db_table)} claim
JOIN {quote(Item._meta.db_table)} item ON item.id = claim.item_id
JOIN {quote(Campaign._meta.db_table)} campaign ON campaign.id = item.campaign_id
JOIN {quote(Annotator._meta.db_table)} annotator ON annotator.id = claim.annotator_id
WHERE claim.item_id = %s AND annotator.user_id = %s
"""


def annotation_for_user(user, annotation_id) -> Annotation:
    """Staff: any annotation. Annotators: only their own. Everyone else: 404."""
    try:
        return (
            annotations_visible_to(user)
            .select_related("item", "campaign", "annotator")
            .get(pk=annotation_id)
        )
    except (Annotation.DoesNotExist, ValueError, TypeError):
        raise Http404("No such annotation") from None
