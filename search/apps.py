from django.apps import AppConfig

from core.navigation import Area


class SearchConfig(AppConfig):
    name = "search"
    verbose_name = "Search"
    areas: tuple = (
        Area(
            "Search runs",
            "search:run_list",
            "Bandit searches for difficult topics: start, watch, steer with humans, export.",
            staff_only=True,
            order=30,
        ),
        Area(
            "MT-breaker",
            "search:breaker_list",
            "Generate hard texts by letting an LLM edit seeds against target MT (seed 001).",
            staff_only=True,
            order=32,
        ),
        Area(
            "Topics",
            "search:topic_list",
            "Topic trees and text samples: import, generate with a chat engine, browse.",
            staff_only=True,
            order=35,
        ),
    )

    def ready(self) -> None:
        from search import receivers

        receivers.connect()
