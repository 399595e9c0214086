"""The notice page: a title and a sentence (a refusal, a wait), with an optional link."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render


def notice(request, title: str, text: str, status: int = 200, link=None) -> HttpResponse:
    return render(
        request,
        "annotation/notice.html",
        {"title": title, "text": text, "link": link},
        status=status,
    )
