"""REST routes of the search app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from search.api.breaker import BreakerRunViewSet
from search.api.breaker_transfer import BreakerTransferViewSet
from search.api.runs import SearchRunViewSet
from search.api.topics import TopicTreeViewSet


def register(router: DefaultRouter) -> None:
    router.register("topic-trees", TopicTreeViewSet, basename="topic-tree")
    router.register("search-runs", SearchRunViewSet, basename="search-run")
    router.register("breaker-runs", BreakerRunViewSet, basename="breaker-run")
    router.register("breaker-transfers", BreakerTransferViewSet, basename="breaker-transfer")
