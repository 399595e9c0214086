"""The API's list and detail of one object type, through its permission-checked accessors.

Each object type has one accessor pair, shared by the pages, the API and the exports (STYLE 9):
what a user may list, and one object or a 404 (existence must not leak). A viewset over them
subclasses :class:`ScopedReadViewSet` and names its accessors and serializers; its own actions
(create, exports, edits) stay its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rest_framework import mixins, serializers, viewsets

__all__ = ["ScopedReadViewSet"]


class ScopedReadViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """List and retrieve one object type through its accessors.

    A subclass sets ``list_serializer`` and ``detail_serializer`` (the same one when the list
    shows all), and, as static methods, ``objects_for_user(user)`` (the queryset it lists) and
    ``object_for_user(user, pk)`` (one object, or Http404). The schema, which has no user to
    ask, reads the model from the list serializer.
    """

    list_serializer: ClassVar[type[serializers.ModelSerializer]]
    detail_serializer: ClassVar[type[serializers.ModelSerializer]]
    objects_for_user: Callable[[Any], Any]
    object_for_user: Callable[[Any, Any], Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "list_serializer" in cls.__dict__:
            model: Any = cls.list_serializer.Meta.model
            cls.queryset = model._default_manager.none()

    def get_queryset(self) -> Any:
        return self.objects_for_user(self.request.user)

    def get_object(self) -> Any:
        return self.object_for_user(self.request.user, self.kwargs["pk"])

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:
        return self.list_serializer if self.action == "list" else self.detail_serializer
