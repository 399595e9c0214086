from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "imports"
    verbose_name = "Imports"

    def ready(self) -> None:
        import rounds
        from imports.services import IMPORT_JOBS

        rounds.register(IMPORT_JOBS)
