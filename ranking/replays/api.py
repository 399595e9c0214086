"""REST API for replay runs, ``/api/replays/`` (staff only, like the pages): create, list,
retrieve (with the curves and the summary once finished) and cancel. A refused configuration is
a 400 whose ``errors`` name each field (an unknown policy or dataset too), with nothing written."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from core.api_fields import optional_text
from core.api_jobs import CheckedJobViewSet, JobSerializer
from core.api_links import LinksField
from difficulty.models import DifficultyDataset
from ranking import allocation
from ranking.api.serializers import JobCreateSerializer
from ranking.replays import selectors
from ranking.replays.models import ReplayRun
from ranking.replays.services import (
    DEFAULT_POLICIES,
    LIMITS,
    ReplayStateError,
    cancel_replay,
    start_replay,
)


def _bounded(field: str, default: int) -> serializers.IntegerField:
    low, high = LIMITS[field]
    return serializers.IntegerField(default=default, min_value=low, max_value=high)


class ReplayCreateSerializer(JobCreateSerializer):
    sources = {"dataset": selectors.datasets_for_replay}

    dataset = serializers.PrimaryKeyRelatedField(
        queryset=DifficultyDataset.objects.none(), help_text="Difficulty dataset id."
    )
    language_pair = optional_text(
        max_length=40, help_text="e.g. en-cs; may be left out when the dataset has one pair."
    )
    score = optional_text(
        max_length=200,
        help_text="human (default: one score a cell), raw or z (one rater's score a judgment).",
    )
    policies = serializers.ListField(
        child=serializers.ChoiceField(choices=list(allocation.POLICIES)), min_length=1,
        default=list(DEFAULT_POLICIES),
    )  # fmt: skip
    goal = serializers.ChoiceField(choices=ReplayRun.Goal.choices, default=ReplayRun.Goal.TOP)
    n_seeds = _bounded("n_seeds", 20)
    n_checkpoints = _bounded("n_checkpoints", 40)
    batch_size = _bounded("batch_size", 15)
    n_resamples = _bounded("n_resamples", 200)
    alpha = serializers.FloatField(default=0.05, min_value=0.0001, max_value=0.5)
    tau_threshold = serializers.FloatField(default=0.9, min_value=0.01, max_value=0.99)
    name = optional_text(max_length=200)


class ReplayListSerializer(JobSerializer):
    links = LinksField(page="ranking:replay_detail", curves="ranking:replay_chart")

    class Meta:
        model = ReplayRun
        fields = [
            "id", "name", "dataset", "language_pair", "score", "policies", "goal", "n_seeds",
            "n_checkpoints", "batch_size", "n_resamples", "alpha", "tau_threshold", "status",
            "error", "round_index", "items_done", "items_total", "progress", "created_at",
            "started_at", "finished_at", "links",
        ]  # fmt: skip
        read_only_fields = fields


class ReplaySerializer(ReplayListSerializer):
    """A run with its result once finished: the data, the full-data reference, ``curves``
    (per policy: the checkpoint budgets and, for tau, top and clusters, the mean over seeds with
    a 95 % band) and ``summary`` (budgets to decide, as ratios to uniform and Pearmut)."""

    class Meta(ReplayListSerializer.Meta):
        fields = [*ReplayListSerializer.Meta.fields, "result"]
        read_only_fields = fields


class ReplayRunViewSet(CheckedJobViewSet):
    """Allocation replays (staff only)."""

    list_serializer = ReplayListSerializer
    detail_serializer = ReplaySerializer
    create_serializer = ReplayCreateSerializer
    objects_for_user = staticmethod(selectors.replays_for_user)
    object_for_user = staticmethod(selectors.replay_for_user)
    start_job = staticmethod(start_replay)
    cancel_job = staticmethod(cancel_replay)
    state_error = ReplayStateError

    def create(self, request: Request) -> Response:
        """Start a replay of policies × seeds on a difficulty dataset's human scores."""
        return super().create(request)
