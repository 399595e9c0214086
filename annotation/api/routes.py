"""REST routes of the annotation app, registered on the one router in config/api.py."""

from rest_framework.routers import DefaultRouter

from annotation.api.views import (
    AnnotationViewSet,
    AnnotatorViewSet,
    CampaignViewSet,
    ItemViewSet,
)


def register(router: DefaultRouter) -> None:
    # Next-item (campaigns) and submit (annotations) first: URLs are matched in this order.
    router.register("campaigns", CampaignViewSet, basename="campaign")
    router.register("annotations", AnnotationViewSet, basename="annotation")
    router.register("items", ItemViewSet, basename="item")
    router.register("annotators", AnnotatorViewSet, basename="annotator")
