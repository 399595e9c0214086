from django.apps import AppConfig

from config.navigation import Area


class EnginesConfig(AppConfig):
    name = "engines"
    verbose_name = "Engines"
    areas: tuple = (
        Area(
            "Engines",
            "engines:list",
            "LLMs, MT, QE and difficulty estimators: configure, test, see calls and costs.",
            staff_only=True,
            order=10,
        ),
    )
