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
        import rounds
        from annotation.signals import item_completed
        from lexical.evaluation.services import EVALUATIONS
        from lexical.mining.services import MINING_JOBS
        from lexical.rules.services import RULE_JOBS
        from lexical.studies.rule_validation import services as rule_validation_services

        item_completed.connect(
            rule_validation_services.on_item_completed,
            dispatch_uid="lexical.studies.rule_validation",
        )
        rounds.register(MINING_JOBS, RULE_JOBS, EVALUATIONS)
