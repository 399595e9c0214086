"""The API of a kind of long job, written once: list, detail and the controls.

Mining jobs, rule jobs, evaluations, transfers and runs each had the same viewset around their
own serializers and services: the user's jobs, one job (404 for another's), the short list and
the full detail, and ``cancel`` (``pause``/``resume`` for runs) answering the job as it is now,
or a 409 that says why its state refuses the control. A kind's viewset subclasses
:class:`JobViewSet` and names those parts; its own actions (create, results, exports) stay its
own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_errors import field_errors
from core.api_parsers import StrictJSONParser
from core.api_viewsets import ScopedReadViewSet
from rounds import JobConfigError

__all__ = [
    "CheckedJobViewSet",
    "JobConfigErrorSerializer",
    "JobControlErrorSerializer",
    "JobReadViewSet",
    "JobSerializer",
    "JobViewSet",
    "RoundJobViewSet",
    "start_schema",
]


# What every kind's job serializer shows alike: its status, progress and cost (a kind lists
# those it has in ``Meta.fields``). No docstring: the schema would describe every job with it.
# The status is a plain string in the schema, its values in the help text: as an enum it would
# collide with the other "status" enums (spectacular cannot name one shared by a kind's list and
# detail serializers).
class JobSerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True)
    # A kind may show its progress otherwise (a DEC evaluation's done/total/percent).
    progress: serializers.Field = serializers.FloatField(read_only=True)
    cost = serializers.FloatField(read_only=True)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        meta = cls.__dict__.get("Meta")
        if meta is not None and "status" not in cls.__dict__:
            values = ", ".join(meta.model.Status.values)
            cls._declared_fields["status"] = serializers.CharField(
                read_only=True, help_text=f"One of: {values}."
            )


def start_schema(config: type[serializers.Serializer], created: Any) -> Callable:
    """The schema of a kind's ``create``: ``config`` in, ``created`` (201) or the 400 of a
    refused configuration out."""
    return extend_schema(request=config, responses={201: created, 400: JobConfigErrorSerializer})


class JobControlErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why the job's state refuses the control.")


class JobConfigErrorSerializer(serializers.Serializer):
    """The 400 of a refused job configuration (``rounds.JobConfigError``)."""

    detail = serializers.CharField(help_text="Every problem on one line.")
    # A field named "errors": the metaclass pops declared fields, .errors stays the property.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.CharField(),
        required=False,
        help_text="Field -> message; absent when the body itself is not readable JSON.",
    )


class JobReadViewSet(ScopedReadViewSet):
    """List and retrieve one kind of job through its permission-checked accessors
    (``objects_for_user``, ``object_for_user``: see :class:`ScopedReadViewSet`). With
    ``reread_detail``, the detail is read again through ``object_for_user`` before it answers,
    for a kind whose rows carry (annotate) what the detail shows.
    """

    reread_detail: ClassVar[bool] = False

    def detail_data(self, job: Any) -> Any:
        """The job's detail as the API answers it (read afresh with ``reread_detail``)."""
        if self.reread_detail:
            job = self.object_for_user(self.request.user, job.pk)
        return self.detail_serializer(job, context=self.get_serializer_context()).data


class JobViewSet(JobReadViewSet):
    """List, retrieve and cancel one kind of job (staff only, like the pages).

    Besides :class:`JobReadViewSet`'s parts, a subclass sets ``cancel_job(job)`` (the service,
    raising ``state_error``) as a static method. Other controls (pause, resume) are actions
    that return :meth:`control`; ``controls`` names them so the schema documents their
    answers (a kind whose cancel answers otherwise names none and writes its own).
    """

    permission_classes = [IsAdminUser]
    # JSON only: a configuration is a nested object, which a form encoding cannot carry.
    parser_classes = [StrictJSONParser]
    state_error: ClassVar[type[Exception]]
    cancel_job: Callable[[Any], Any]
    # The actions answered by :meth:`control`, documented with the detail and the 409.
    controls: ClassVar[tuple[str, ...]] = ("cancel",)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "detail_serializer" not in cls.__dict__ or not cls.controls:
            return
        answers = {
            200: cls.detail_serializer,
            409: OpenApiResponse(
                JobControlErrorSerializer, description="not possible in the job's state"
            ),
        }
        schema = extend_schema(request=None, responses=answers)
        extend_schema_view(**dict.fromkeys(cls.controls, schema))(cls)

    def started(
        self, start_job: Callable[..., Any], answer: Callable[[Any], Any] | None = None
    ) -> Response:
        """``create``'s answer: what ``start_job(body, created_by=user)`` started, with a 201
        (``answer(started)``, by default the job's detail); a refused configuration is a 400
        naming each field, and nothing is written."""
        try:
            job = start_job(self.request.data, created_by=self.request.user)
        except JobConfigError as exc:
            return Response(field_errors(exc.errors), status=status.HTTP_400_BAD_REQUEST)
        return Response((answer or self.detail_data)(job), status=status.HTTP_201_CREATED)

    def control(self, service: Callable[[Any], Any]) -> Response:
        """Apply ``service`` (cancel, pause, resume) to the job: its detail, or a 409."""
        try:
            job = service(self.get_object())
        except self.state_error as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self.detail_data(job))

    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: Any = None) -> Response:
        """End the job for good; the round in flight still records what it paid for."""
        return self.control(self.cancel_job)


class CheckedJobViewSet(JobViewSet):
    """A kind whose body is checked by a serializer before its job starts: a subclass sets
    ``create_serializer`` (its refusals are DRF's 400 keyed by field; its context has the
    request, for the rows the user may pick) and ``start_job`` as a static method, called as
    ``start_job(**checked, created_by=user)``. ``create``'s schema follows from them."""

    create_serializer: ClassVar[type[serializers.Serializer]]
    start_job: Callable[..., Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "create_serializer" in cls.__dict__:
            schema = start_schema(cls.create_serializer, cls.detail_serializer)
            extend_schema_view(create=schema)(cls)

    def create(self, request: Request) -> Response:
        """Start one: the settings (and the source) are checked, then its first round queued."""
        body = self.create_serializer(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        # started() hands over the raw body; the checked one is what starts the job.
        return self.started(
            lambda _raw, created_by: self.start_job(**body.validated_data, created_by=created_by)
        )


class RoundJobViewSet(JobViewSet):
    """A job that runs round by round, so it also pauses and resumes (at the end of the round
    in flight): a subclass sets ``pause_job(job)`` and ``resume_job(job)`` as static methods,
    raising ``state_error`` like ``cancel_job``."""

    controls = ("pause", "resume", "cancel")
    pause_job: Callable[[Any], Any]
    resume_job: Callable[[Any], Any]

    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: Any = None) -> Response:
        return self.control(self.pause_job)

    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: Any = None) -> Response:
        return self.control(self.resume_job)
