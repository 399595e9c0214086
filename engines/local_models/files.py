"""Reading a model directory's small JSON files (configs, tokenizer settings) as untrusted input:
size-capped, strict UTF-8 JSON, an object at the top. No torch, no Django."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["MAX_CONFIG_BYTES", "read_json_object"]

MAX_CONFIG_BYTES = 4 * 1024 * 1024


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when there is no such file; ValueError naming the
    file when it is too large, not JSON, or not an object."""
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ValueError(f"{path} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return value
