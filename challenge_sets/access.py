"""Who may reach challenge sets: the one access function pages, API and downloads share.

Curating is a permission an admin grants through Django groups
(``challenge_sets.curate_challengeset``) to staff; annotators and other users never see a set.
For them a set does not exist (404), so its name and size do not leak.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from challenge_sets.models import ChallengeSet
from core.access import visible_or_404

PERMISSION = "challenge_sets.curate_challengeset"


def may_curate(user) -> bool:
    return bool(
        user
        and user.is_authenticated
        and user.is_active
        and user.is_staff
        and user.has_perm(PERMISSION)
    )


def sets_for(user) -> QuerySet[ChallengeSet]:
    """Every set for a curator, none for anybody else."""
    return ChallengeSet.objects.all() if may_curate(user) else ChallengeSet.objects.none()


def challenge_set_for(user, pk: int, *, for_update: bool = False) -> ChallengeSet:
    """The set ``pk`` if ``user`` may curate it; otherwise 404, as if it did not exist."""
    queryset = sets_for(user)
    if for_update:
        queryset = queryset.select_for_update()
    return visible_or_404(queryset, pk, "No such challenge set")


def require_curator(user) -> None:
    """404 for anybody who may not curate (pages without a set: the list, the new-set form)."""
    if not may_curate(user):
        raise Http404("No such page")
