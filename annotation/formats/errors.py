"""The error every campaign-file reader raises."""


class FormatError(ValueError):
    """A file that cannot be read in its format; ``where`` says where (e.g. "batch 1, item 3")."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}" if where else reason)
