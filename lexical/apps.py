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
            "selections.",
            staff_only=True,
            order=45,
        ),
    )
