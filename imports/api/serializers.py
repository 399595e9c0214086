from __future__ import annotations

from rest_framework import serializers
from rest_framework.reverse import reverse

from core.api_jobs import JobSerializer
from imports import selectors
from imports.models import ImportJob


class ImportJobSerializer(JobSerializer):
    """A background import: its status, progress, refusals and result."""

    url = serializers.SerializerMethodField(help_text="This job in the API.")
    page = serializers.SerializerMethodField(help_text="This job's page (progress, result).")
    result_url = serializers.SerializerMethodField(help_text="The imported object's page.")
    percent = serializers.IntegerField(source="progress_percent", read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)

    class Meta:
        model = ImportJob
        fields = [
            "id", "url", "page", "kind", "status", "file_name", "file_size", "lines_total",
            "lines_done", "percent", "errors", "result_id", "result_url", "summary", "created_by",
            "created_at", "started_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_url(self, job: ImportJob) -> str:
        return reverse("import-job-detail", args=[job.pk], request=self.context.get("request"))

    def get_page(self, job: ImportJob) -> str:
        return reverse("imports:job_detail", args=[job.pk], request=self.context.get("request"))

    def get_result_url(self, job: ImportJob) -> str | None:
        return selectors.result_url(job)
