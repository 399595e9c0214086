"""REST API for parallel corpora (staff only): list, retrieve, import (multipart), pairs.

An import is all or nothing; a refused one is a 400 whose ``detail`` names the line and whose
``errors`` are keyed by the field at fault (``file``, ``src_file``, ``name``, ``src_lang``...),
with ``line`` (1-based) when a line is at fault."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_errors import field_errors
from core.api_fields import optional_text
from core.api_links import LinksField
from core.api_viewsets import ScopedReadViewSet
from core.uploads import validate_upload_size
from lexical.corpora import reading
from lexical.corpora.selectors import corpora_for_user, corpus_for_user, corpus_pairs
from lexical.corpora.services import CorpusImportError, CorpusSource, import_uploaded_corpus
from lexical.models import ParallelCorpus, SentencePair


class ParallelCorpusSerializer(serializers.ModelSerializer):
    created_by: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    links = LinksField(page="lexical:corpus_detail", pairs="lexical-corpus-pairs")

    class Meta:
        model = ParallelCorpus
        fields = [
            "id", "name", "src_lang", "tgt_lang", "source_format", "description", "status",
            "error", "size", "created_by", "created_at", "links",
        ]  # fmt: skip
        read_only_fields = fields


class SentencePairSerializer(serializers.ModelSerializer):
    class Meta:
        model = SentencePair
        fields = ["position", "src", "tgt"]
        read_only_fields = fields


class CorpusImportSerializer(serializers.Serializer):
    """What the upload page takes: ``format`` moses needs ``src_file`` and ``tgt_file``; tsv
    and jsonl need ``file``."""

    name = serializers.CharField(max_length=200)
    src_lang = serializers.CharField(max_length=16)
    tgt_lang = serializers.CharField(max_length=16)
    format = serializers.ChoiceField(choices=list(reading.FORMATS))
    file = serializers.FileField(required=False, validators=[validate_upload_size])
    src_file = serializers.FileField(required=False, validators=[validate_upload_size])
    tgt_file = serializers.FileField(required=False, validators=[validate_upload_size])
    description = optional_text()

    def validate(self, data):
        if data["format"] == "moses":
            missing = {
                key: "the moses format needs both src_file and tgt_file"
                for key in ("src_file", "tgt_file")
                if key not in data
            }
            if missing:
                raise serializers.ValidationError(missing)
        elif "file" not in data:
            raise serializers.ValidationError({"file": f"the {data['format']} format needs a file"})
        return data

    def corpus_source(self) -> CorpusSource:
        return CorpusSource.from_upload(self.validated_data)


class ParallelCorpusViewSet(ScopedReadViewSet):
    """Parallel corpora (staff only)."""

    permission_classes = [IsAdminUser]
    list_serializer = detail_serializer = ParallelCorpusSerializer
    objects_for_user = staticmethod(corpora_for_user)
    object_for_user = staticmethod(corpus_for_user)

    @extend_schema(
        request={"multipart/form-data": CorpusImportSerializer},
        responses={201: ParallelCorpusSerializer},
    )
    def create(self, request: Request) -> Response:
        """Import a corpus from uploaded files (multipart); all or nothing."""
        body = CorpusImportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        source = body.corpus_source()
        try:
            corpus = import_uploaded_corpus(source, body.validated_data, created_by=request.user)
        except CorpusImportError as exc:
            fields = _error_fields(exc, source)
            payload = field_errors({field: [str(exc)] for field in fields})
            if exc.line:
                payload["line"] = exc.line
            return Response(payload, status=status.HTTP_400_BAD_REQUEST)
        context = self.get_serializer_context()
        return Response(
            ParallelCorpusSerializer(corpus, context=context).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(responses={200: SentencePairSerializer(many=True)})
    @action(detail=True, methods=["get"])
    def pairs(self, request: Request, pk: int) -> Response:
        """The corpus's sentence pairs in file order, paginated."""
        pairs = corpus_pairs(self.get_object())
        page = self.paginate_queryset(pairs)
        if page is not None:
            return self.get_paginated_response(SentencePairSerializer(page, many=True).data)
        return Response(SentencePairSerializer(pairs, many=True).data)


def _error_fields(exc: CorpusImportError, source: CorpusSource) -> list[str]:
    """The request fields an import error is about: a moses error names the file it was found
    in, and misalignment (no file named) concerns both."""
    if exc.field != "file":
        return [exc.field]
    if source.format != "moses":
        return ["file"]
    if exc.file == source.src_name:
        return ["src_file"]
    if exc.file == source.tgt_name:
        return ["tgt_file"]
    return ["src_file", "tgt_file"]
