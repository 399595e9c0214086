from django.apps import AppConfig
from django.core.management import call_command
from django.db.models.signals import post_migrate


def create_cache_table(using: str = "default", **kwargs) -> None:
    """Make the database cache's table (CACHES in config/settings.py), if that is the cache.

    After every ``migrate`` rather than in a migration: a migration runs once, with whatever
    cache was configured then, while ``createcachetable`` follows the current CACHES and skips a
    table that exists. So `make migrate`, a deployment's ``migrate`` and the test database
    (pytest-django builds it by migrating) all get the table, also after a move away from Redis.
    """
    call_command("createcachetable", database=using, verbosity=0)


class PlatformConfig(AppConfig):
    """Platform-wide pieces that belong to no feature app: worker health and the dashboard."""

    name = "core"
    label = "platform"
    verbose_name = "Platform"

    def ready(self) -> None:
        from core import worker_signals  # noqa: F401  (connects Celery worker signals)

        # Sent once per app on each migrate; this app's signal is enough.
        post_migrate.connect(create_cache_table, sender=self, dispatch_uid="platform.cache_table")
