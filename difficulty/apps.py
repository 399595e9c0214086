from django.apps import AppConfig

from core.navigation import Area


class DifficultyConfig(AppConfig):
    name = "difficulty"
    verbose_name = "Difficulty"
    areas: tuple = (
        Area(
            "Difficulty",
            "difficulty:dataset_list",
            "Difficulty datasets: compare estimators with DEC and hardest-subset selection.",
            staff_only=True,
            order=40,
        ),
    )

    def ready(self) -> None:
        import rounds
        from difficulty import import_kinds
        from difficulty.services import DEC_EVALUATIONS

        rounds.register(DEC_EVALUATIONS)
        import_kinds.register()
