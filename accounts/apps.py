from django.apps import AppConfig

from core.navigation import Area


class AccountsConfig(AppConfig):
    """Platform-level credentials: personal API tokens and the API's throttles (ADR 0011)."""

    name = "accounts"
    verbose_name = "Accounts"
    areas: tuple = (
        Area(
            "API tokens",
            "accounts:tokens",
            "Personal tokens for using the REST API from scripts.",
            staff_only=False,
            order=900,
        ),
    )

    def ready(self) -> None:
        from django.core.signals import request_finished

        from accounts import schema  # noqa: F401  (registers the OpenAPI auth extensions)
        from accounts.sessions import forget_loaded_user

        request_finished.connect(forget_loaded_user, dispatch_uid="accounts.forget_loaded_user")
