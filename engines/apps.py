from django.apps import AppConfig

from core.navigation import Area


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

    def ready(self) -> None:
        from django.core.signals import request_finished

        from engines import limiter

        # A request that called engines gives the limiter's idle sessions back, as Django
        # does with its own connection (engines.limiter keeps them across batches otherwise).
        request_finished.connect(limiter.close_all, dispatch_uid="engines.limiter.close_all")
