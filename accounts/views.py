"""The user's own API tokens: list, create (the secret is shown once), revoke."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import access, services
from accounts.forms import TokenForm


@never_cache  # the page that shows a new secret must not be kept by any cache
@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    created = secret = None
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data["expires_in_days"]
        created, secret = services.create_token(
            request.user,
            form.cleaned_data["name"],
            read_only=form.cleaned_data["read_only"],
            expires_at=timezone.now() + timedelta(days=days) if days else None,
        )
        form = TokenForm()
    context = {
        "form": form,
        "tokens": access.tokens_of(request.user),
        "created": created,
        "secret": secret,
        "now": timezone.now(),
    }
    status = 422 if request.method == "POST" and created is None else 200
    return render(request, "accounts/tokens.html", context, status=status)


@login_required
@require_POST
def revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = services.revoke_token(access.token_for_owner(request.user, token_id))
    messages.success(request, f"Token {token.name} ({token.prefix}…) revoked.")
    return redirect("accounts:tokens")
