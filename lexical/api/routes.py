"""REST routes of the lexical app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter


def register(router: DefaultRouter) -> None:
    """Register this app's viewsets (none yet)."""
