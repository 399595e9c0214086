"""How the API's authentication classes appear in the OpenAPI schema."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token (hs_...), made on the API tokens page.",
        }


class OptionalBasicScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.OptionalBasicAuthentication"
    name = "basicAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "basic",
            "description": "Only where the server sets API_BASIC_AUTH=true.",
        }
