"""The error every campaign-file reader raises, and the key that says where an item was."""

from typing import Any

from formats import strict_json

WHERE = "_where"
"""Key a reader adds to an item: where in the file it comes from ("batch 1, item 3"), so the
protocol's refusal of the item names that place; the import service removes it."""


class FormatError(ValueError):
    """A file that cannot be read in its format; ``where`` says where (e.g. "batch 1, item 3")."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}" if where else reason)


def load_json(data: bytes) -> Any:
    """A whole-file JSON document (Appraise, Pearmut), or :class:`FormatError` saying why not."""
    try:
        return strict_json.loads(data)
    except strict_json.JSONSyntaxError as exc:
        raise FormatError(f"line {exc.lineno}", f"not valid JSON ({exc.msg})") from None
    except strict_json.JSONInputError as exc:
        raise FormatError("", f"not valid JSON ({exc})") from None
