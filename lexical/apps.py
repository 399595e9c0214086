from django.apps import AppConfig


class LexicalConfig(AppConfig):
    name = "lexical"
    verbose_name = "Lexical selection"
    areas: tuple = ()

    def ready(self) -> None:
        from lexical.evaluation import services as evaluation_services
        from lexical.rules import services as rule_services

        rule_services.register_recovery()
        evaluation_services.register_recovery()
