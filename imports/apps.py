from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "imports"
    verbose_name = "Imports"

    def ready(self) -> None:
        import rounds
        from imports.services import recover_import_jobs

        rounds.register(rounds.JobKind("import", recover_import_jobs))
