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
        import rounds
        from ranking.assignment import register_policies
        from ranking.replays.services import REPLAYS
        from ranking.services import RANKINGS
        from ranking.subsets import sections
        from ranking.subsets.services import ANALYSES

        rounds.register(RANKINGS, ANALYSES, REPLAYS)
        sections.register_sections()
        register_policies()
