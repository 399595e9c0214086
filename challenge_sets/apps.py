from django.apps import AppConfig

from core.navigation import Area


class ChallengeSetsConfig(AppConfig):
    name = "challenge_sets"
    verbose_name = "Challenge sets"
    areas: tuple = (
        Area(
            "Challenge sets",
            "challenge_sets:index",
            "Curate hard texts with provenance, validate them with people, freeze and export.",
            staff_only=True,
            order=60,
            permission="challenge_sets.curate_challengeset",
        ),
    )

    def ready(self) -> None:
        from annotation.signals import item_completed
        from challenge_sets import import_kinds
        from challenge_sets.validation import on_item_completed

        import_kinds.register()
        item_completed.connect(on_item_completed, dispatch_uid="challenge_sets.item_completed")
