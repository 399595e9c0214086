from importlib import import_module

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import transaction

# Order matters: later apps build on what earlier ones create (engines before search runs).
DEMO_APPS = (
    "engines",
    "annotation",
    "difficulty",
    "search",
    "lexical",
    "challenge_sets",
    "ranking",
)


class Command(BaseCommand):
    help = "Create or refresh the offline demo data (idempotent: running it twice changes nothing)."

    def handle(self, *args, **options):
        for label in DEMO_APPS:
            config = apps.get_app_config(label)
            try:
                module = import_module(f"{config.name}.demo")
            except ModuleNotFoundError as exc:
                if exc.name != f"{config.name}.demo":
                    raise
                continue
            with transaction.atomic():
                module.load_demo(self.stdout)
        self.stdout.write(self.style.SUCCESS("Demo data is in place."))
