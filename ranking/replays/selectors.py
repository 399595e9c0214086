"""Read queries for replay runs, and the one permission-checked accessor that pages and the API
share. Staff only, like rankings; the datasets offered are the ones the difficulty app lets the
user see."""

from __future__ import annotations

from django.db.models import QuerySet

from core.access import is_active_staff, visible_or_404
from ranking.replays.models import ReplayRun
from ranking.selectors import datasets_for_ranking

__all__ = ["datasets_for_replay", "replay_for_user", "replays_for_user"]


def replays_for_user(user) -> QuerySet[ReplayRun]:
    """Every replay a staff member may see, newest first (the snapshot left out: the list
    needs none of it)."""
    if not is_active_staff(user):
        return ReplayRun.objects.none()
    visible = datasets_for_ranking(user)
    return ReplayRun.objects.filter(dataset__in=visible).select_related("dataset", "created_by")


def replay_for_user(user, pk) -> ReplayRun:
    """The replay ``pk`` if ``user`` may see it; otherwise 404, as if it did not exist."""
    return visible_or_404(replays_for_user(user), pk, "No such replay.")


datasets_for_replay = datasets_for_ranking
