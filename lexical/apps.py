from django.apps import AppConfig


class LexicalConfig(AppConfig):
    name = "lexical"
    verbose_name = "Lexical selection"
    areas: tuple = ()

    def ready(self) -> None:
        from lexical.rules.services import register_recovery

        register_recovery()
