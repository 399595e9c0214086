"""Content negotiation for the API's file exports."""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation

__all__ = ["FileNegotiation"]


class FileNegotiation(DefaultContentNegotiation):
    """An export answers the file it was asked for whatever the client accepts, and its query
    (``?format=jsonl``, ``?as=csv``) names the file's format, not a DRF renderer: the file is
    the action's own response, and its errors stay JSON (the first renderer)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
