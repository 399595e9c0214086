from django.apps import AppConfig


class PlatformConfig(AppConfig):
    """Platform-wide pieces that belong to no feature app: worker health and the dashboard."""

    name = "config"
    label = "platform"
    verbose_name = "Platform"

    def ready(self) -> None:
        from config import worker_signals  # noqa: F401  (connects Celery worker signals)
