"""REST API for topic trees (seed 000): list, import, corpus upload, generation, topic search.

Staff only, like the pages; writes go through ``search.topics.services`` and
``search.topics.generation``, and a refused input is a 400 with the reason, nothing written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_fields import optional_text
from core.uploads import validate_upload_size
from imports import ImportRefused
from imports import services as import_services
from imports.api.serializers import ImportJobSerializer
from imports.api.views import accepted
from search.models import Topic, TopicTree

if TYPE_CHECKING:
    from django.contrib.auth.models import User
from search.topics import selectors
from search.topics.generation import BRANCHING_RANGE, DEPTH_RANGE, start_tree_generation
from search.topics.import_kinds import CORPUS_KIND, TREE_KIND, corpus_options, tree_options
from search.topics.services import (
    CorpusImportError,
    TopicTreeError,
    import_corpus,
    import_topic_tree,
)

# --- Serializers ---------------------------------------------------------------------------


class TopicTreeSerializer(serializers.ModelSerializer):
    n_samples = serializers.IntegerField(read_only=True)
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = TopicTree
        fields = [
            "id",
            "name",
            "description",
            "language",
            "origin",
            "status",
            "error",
            "generation",
            "source_file_name",
            "n_topics",
            "n_leaves",
            "n_samples",
            "created_by",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class TopicSerializer(serializers.ModelSerializer):
    is_leaf = serializers.SerializerMethodField()
    n_children = serializers.IntegerField(read_only=True)

    class Meta:
        model = Topic
        fields = [
            "id",
            "name",
            "path",
            "depth",
            "parent",
            "position",
            "arm",
            "is_leaf",
            "n_children",
            "keywords",
        ]
        read_only_fields = fields

    def get_is_leaf(self, topic: Topic) -> bool:
        return topic.arm is not None


class CreateTreeSerializer(serializers.Serializer):
    """A tree as a JSON value (``tree``) or as an uploaded JSON file (``file``), not both."""

    name = serializers.CharField(max_length=200)
    language = serializers.CharField(max_length=16, default="en")
    description = optional_text()
    tree = serializers.JSONField(
        required=False, help_text='Nested {"Root": {"Child": {}}} or a list of names.'
    )
    file = serializers.FileField(required=False, validators=[validate_upload_size])

    def validate(self, attrs):
        if ("tree" in attrs) == ("file" in attrs):
            raise serializers.ValidationError("send exactly one of tree (JSON) or file (upload)")
        return attrs


class CorpusSerializer(serializers.Serializer):
    file = serializers.FileField(required=False, validators=[validate_upload_size])
    jsonl = serializers.CharField(required=False, trim_whitespace=False)

    def validate(self, attrs):
        if ("file" in attrs) == ("jsonl" in attrs):
            raise serializers.ValidationError("send exactly one of file (upload) or jsonl (text)")
        return attrs


class CorpusReportSerializer(serializers.Serializer):
    lines = serializers.IntegerField()
    created = serializers.IntegerField()
    duplicates = serializers.IntegerField()


class GenerateTreeSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    engine = serializers.CharField(help_text="Name of an enabled engine configured for chat.")
    roots = serializers.ListField(child=serializers.CharField(max_length=300), min_length=1)
    depth = serializers.IntegerField(min_value=DEPTH_RANGE[0], max_value=DEPTH_RANGE[1])
    branching = serializers.IntegerField(min_value=BRANCHING_RANGE[0], max_value=BRANCHING_RANGE[1])
    language = serializers.CharField(max_length=16, default="en")


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    # A field named "errors": the metaclass pops declared fields, .errors stays the property.
    errors = serializers.ListField(  # type: ignore[assignment]
        child=serializers.DictField(), required=False
    )


# --- Views ---------------------------------------------------------------------------------


class TopicTreeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Topic trees (staff only). Create one from JSON or a file, add a corpus, generate one with
    a chat engine (``status`` is ``generating`` until the background job ends), search topics."""

    serializer_class = TopicTreeSerializer
    permission_classes = [IsAdminUser]

    def get_queryset(self):
        return selectors.tree_rows(self.request.user).order_by("-created_at", "-id")

    @extend_schema(
        request=CreateTreeSerializer,
        responses={201: TopicTreeSerializer, 202: ImportJobSerializer, 400: ErrorSerializer},
    )
    def create(self, request: Request) -> Response:
        body = CreateTreeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        upload = data.get("file")
        if upload and import_services.runs_in_background(upload):
            options = tree_options(
                name=data["name"], language=data["language"], description=data["description"],
                file_name=upload.name,
            )  # fmt: skip
            return self._in_background(request, TREE_KIND, upload, options)
        try:
            tree = import_topic_tree(
                upload.read() if upload else data["tree"],
                name=data["name"],
                language=data["language"],
                description=data["description"],
                source_file_name=upload.name if upload else "",
                created_by=request.user,
            )
        except TopicTreeError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self._fresh(tree), status=status.HTTP_201_CREATED)

    def _in_background(self, request: Request, kind: str, upload, options: dict) -> Response:
        """A file above ``IMPORT_INLINE_MAX_MB``: 202 with the import job a worker runs."""
        try:
            job = import_services.start_import(kind, upload, options, created_by=request.user)
        except ImportRefused as exc:
            return Response({"detail": exc.errors[0]}, status=status.HTTP_400_BAD_REQUEST)
        return accepted(job, request)

    def _fresh(self, tree: TopicTree) -> dict:
        return TopicTreeSerializer(self.get_queryset().get(pk=tree.pk)).data

    @extend_schema(
        request=CorpusSerializer,
        responses={200: CorpusReportSerializer, 202: ImportJobSerializer, 400: ErrorSerializer},
    )
    @action(detail=True, methods=["post"])
    def corpus(self, request: Request, pk=None) -> Response:
        """Add samples from JSONL (``{"topic", "text", "source_url"}`` per line). A ``file``
        above ``IMPORT_INLINE_MAX_MB`` is imported by a worker: 202 with the import job."""
        tree = self.get_object()
        body = CorpusSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        if tree.status != TopicTree.Status.READY:
            detail = f"the tree is {tree.status}: it has no topics yet"
            return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)
        upload = body.validated_data.get("file")
        if upload and import_services.runs_in_background(upload):
            return self._in_background(
                request, CORPUS_KIND, upload, corpus_options(tree, upload.name)
            )
        source = upload.read() if upload else body.validated_data["jsonl"]
        try:
            report = import_corpus(tree, source, file_name=upload.name if upload else "")
        except CorpusImportError as exc:
            errors = [{"line": number, "reason": reason} for number, reason in exc.errors]
            return Response({"detail": str(exc), "errors": errors}, status=400)
        return Response(CorpusReportSerializer(report).data)

    @extend_schema(
        request=GenerateTreeSerializer,
        responses={202: TopicTreeSerializer, 400: ErrorSerializer},
    )
    @action(detail=False, methods=["post"])
    def generate(self, request: Request) -> Response:
        """Start generating a tree in the background; poll the tree until it is ready."""
        body = GenerateTreeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            tree = start_tree_generation(
                data["name"],
                data["engine"],
                data["roots"],
                data["depth"],
                data["branching"],
                data["language"],
                created_by=request.user,
            )
        except TopicTreeError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self._fresh(tree), status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        parameters=[
            OpenApiParameter("q", OpenApiTypes.STR, description="words the path must contain"),
            OpenApiParameter(
                "parent", OpenApiTypes.STR, description='a topic id, or "root" for the roots'
            ),
        ],
        responses={200: TopicSerializer(many=True), 400: OpenApiResponse(ErrorSerializer)},
    )
    @action(detail=True, methods=["get"])
    def topics(self, request: Request, pk=None) -> Response:
        """A tree's topics in depth-first order, paginated; ``?q=`` searches, ``?parent=`` lists
        one level."""
        tree = self.get_object()
        query = request.query_params.get("q", "").strip()
        parent = request.query_params.get("parent", "")
        if query:
            topics = selectors.search_topics(tree, query)
        elif parent:
            topics = self._children(tree, parent)
            if topics is None:
                return Response({"detail": 'parent must be a topic id or "root"'}, status=400)
        else:
            topics = selectors.tree_topics(tree)
        page = self.paginate_queryset(topics)
        return self.get_paginated_response(TopicSerializer(page, many=True).data)

    @staticmethod
    def _children(tree: TopicTree, parent: str):
        if parent == "root":
            return selectors.child_nodes(tree, None)
        if not parent.isdigit():
            return None
        node = Topic.objects.filter(tree=tree, pk=int(parent)).first()
        return selectors.child_nodes(tree, node) if node else Topic.objects.none()
