"""What an evaluation runs: entries of (engine, kind, setting), written ``NAME:SETTING``.

Settings (seed 004 §4): ``none`` (no rules), ``self`` (rules the same engine generated),
``other:GENERATOR`` (rules from a named generator engine) for chat engines, and ``translate``
for translate engines (the NMT output is matched to a variation, App. B.2).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["CHAT", "SETTINGS", "TRANSLATE", "Entry", "EntryError", "parse_entry"]

CHAT = "chat"
TRANSLATE = "translate"
SETTINGS = ("none", "self", "other", "translate")
SETTING_LABELS = {
    "none": "no rules",
    "self": "self-generated rules",
    "other": "rules from",
    "translate": "NMT",
}


class EntryError(ValueError):
    pass


@dataclass(frozen=True)
class Entry:
    engine: str
    kind: str  # chat | translate
    setting: str  # none | self | other | translate
    generator: str = ""  # the engine whose rules are shown (self: the engine itself)

    @property
    def key(self) -> str:
        """Stable and unique within an evaluation; also the command line's spelling."""
        if self.setting == "other":
            return f"{self.engine}:other:{self.generator}"
        return f"{self.engine}:{self.setting}"

    @property
    def uses_rules(self) -> bool:
        return self.setting in ("self", "other")

    @property
    def setting_label(self) -> str:
        if self.setting == "other":
            return f"rules from {self.generator}"
        return SETTING_LABELS[self.setting]

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, str]) -> Entry:
        return cls(data["engine"], data["kind"], data["setting"], data.get("generator", ""))


def parse_entry(spec: str) -> Entry:
    """``NAME:none`` | ``NAME:self`` | ``NAME:other:GENERATOR`` | ``NAME:translate``.

    The setting is the last ``:`` field (or ``:other:`` and what follows), so engine names with
    colons (``llama3:8b:none``) work.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise EntryError("an entry must be a non-empty string like NAME:none")
    spec = spec.strip()
    head, sep, generator = spec.partition(":other:")
    if sep:
        if not head or not generator.strip():
            raise EntryError(f"{spec[:80]!r}: write rules from another generator as NAME:other:GEN")
        return Entry(head, CHAT, "other", generator.strip())
    head, _, setting = spec.rpartition(":")
    if head and setting in ("none", "self"):
        return Entry(head, CHAT, setting, head if setting == "self" else "")
    if head and setting == "translate":
        return Entry(head, TRANSLATE, "translate")
    raise EntryError(
        f"{spec[:80]!r}: expected NAME:none, NAME:self, NAME:other:GENERATOR or NAME:translate"
    )
