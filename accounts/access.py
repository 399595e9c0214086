"""The one permission-checked accessor for API tokens (STYLE 9)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from accounts.models import ApiToken


def token_for_owner(user, token_id) -> ApiToken:
    """The user's own token; 404 for anyone else's, so their existence does not leak."""
    try:
        return ApiToken.objects.get(pk=token_id, user=user)
    except (ApiToken.DoesNotExist, ValueError, TypeError):
        raise Http404("No such token") from None


def tokens_of(user) -> QuerySet[ApiToken]:
    """Every token of ``user`` (revoked and expired ones too, for the record)."""
    return ApiToken.objects.filter(user_id=user.pk)
