from django.apps import AppConfig

from config.navigation import Area


class LexicalConfig(AppConfig):
    name = "lexical"
    verbose_name = "Lexical selection"
    areas: tuple = (
        Area(
            "Lexical",
            "lexical:home",
            "Lexical selection (seed 004): parallel corpora, concepts with variations, example "
            "selections, LLM-generated rules and model evaluations.",
            staff_only=True,
            order=45,
        ),
    )

    def ready(self) -> None:
        from lexical.evaluation import services as evaluation_services
        from lexical.mining import services as mining_services
        from lexical.rules import services as rule_services

        mining_services.register_recovery()
        rule_services.register_recovery()
        evaluation_services.register_recovery()
