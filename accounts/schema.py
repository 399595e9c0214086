"""How the API's authentication classes appear in the OpenAPI schema."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class _HttpScheme(OpenApiAuthenticationExtension):
    """An HTTP authentication scheme; a subclass names its class, scheme and description.
    Without a ``target_class`` this base matches no authentication class."""

    scheme = ""
    description = ""

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": self.scheme, "description": self.description}


class ApiTokenScheme(_HttpScheme):
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "apiToken"
    scheme = "bearer"
    description = "A personal API token (hs_...), made on the API tokens page."


class OptionalBasicScheme(_HttpScheme):
    target_class = "accounts.authentication.OptionalBasicAuthentication"
    name = "basicAuth"
    scheme = "basic"
    description = "Only where the server sets API_BASIC_AUTH=true."
