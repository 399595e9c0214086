"""REST routes of challenge sets, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from challenge_sets.api.views import ChallengeSetViewSet


def register(router: DefaultRouter) -> None:
    router.register("challenge-sets", ChallengeSetViewSet, basename="challenge-set")
