"""The API's JSON body parser: strict (``formats/strict_json.py``), so a body with ``NaN``, a
duplicate key, a lone surrogate or deep nesting is a 400 naming the problem, not a 500 later."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from formats import strict_json


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        try:
            return strict_json.loads(stream.read())
        except strict_json.JSONInputError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
