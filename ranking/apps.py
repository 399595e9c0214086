from django.apps import AppConfig

from core.navigation import Area


class RankingConfig(AppConfig):
    name = "ranking"
    verbose_name = "Rankings"
    areas: tuple = (
        Area(
            "Rankings",
            "ranking:ranking_list",
            "Rank MT systems on a dataset, a campaign or a challenge set, with WMT-style "
            "significance clusters.",
            staff_only=True,
            order=70,
        ),
    )

    def ready(self) -> None:
        from ranking.services import register_recovery
        from ranking.subsets import sections, services

        register_recovery()
        services.register_recovery()
        sections.register_sections()
