from django.apps import AppConfig

from core.navigation import Area


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
        from annotation.signals import item_completed
        from lexical.evaluation import services as evaluation_services
        from lexical.mining import services as mining_services
        from lexical.rules import services as rule_services
        from lexical.studies.rule_validation import services as rule_validation_services

        item_completed.connect(
            rule_validation_services.on_item_completed,
            dispatch_uid="lexical.studies.rule_validation",
        )
        mining_services.register_recovery()
        rule_services.register_recovery()
        evaluation_services.register_recovery()
