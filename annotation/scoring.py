"""MQM typology, error weights and the MQM → 0–100 mapping (pure Python, no Django).

The weights are those of Freitag et al. (2021), "Experts, Errors, and Context", which the MQM
studies of seed 001 (App. D) follow: a minor error costs 1, a major error 5, a minor
Fluency/Punctuation error 0.1, and a Non-translation 25 whatever its severity. A campaign may
enable a ``critical`` severity (default weight 10) and override every weight; the campaign stores
its overrides as a JSON object read by :meth:`MqmWeights.from_dict`.

The typology is the one used in seed 001 App. D (Tables 11+), completed with the remaining
subtypes of the Freitag et al. typology so that annotators trained on Google's MQM guidelines find
every label they expect. Part of the annotating UI, the validation of submitted spans and the
exports all read it from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

SEVERITIES: tuple[str, ...] = ("minor", "major", "critical")
"""Severities a span may carry; ``critical`` is offered only where the campaign enables it."""
NEUTRAL = "neutral"
"""Google's severity of a remark that is no error (costs nothing); accepted, never offered."""

NON_TRANSLATION = "Non-translation"
OTHER = "Other"
SOURCE_ERROR = "Source error"
"""Google's category for an error in the source text: not the translation's fault (costs 0)."""

MQM_TYPOLOGY: dict[str, tuple[str, ...]] = {
    # Subtypes in seed 001 App. D's error breakdown come first, in the order of its tables;
    # the rest are the Freitag et al. (2021) subtypes that App. D did not observe.
    "Accuracy": (
        "Mistranslation",
        "Creative Reinterpretation",
        "Source language fragment",
        "Omission",
        "Gender Mismatch",
        "Addition",
        "Untranslated text",
    ),
    "Fluency": (
        "Grammar",
        "Punctuation",
        "Spelling",
        "Register",
        "Inconsistency",
        "Character encoding",
    ),
    "Style": (
        "Unnatural or awkward",
        "Bad sentence structure",
        "Archaic or obscure word choice",
    ),
    "Terminology": (
        "Inappropriate for context",
        "Inconsistent use",
    ),
    "Locale convention": (
        "Address format",
        "Currency format",
        "Date format",
        "Name format",
        "Telephone format",
        "Time format",
    ),
    # A whole segment that is not a translation of the source; one span covers everything.
    NON_TRANSLATION: (),
    OTHER: (),
}

GOOGLE_SUBCATEGORIES: dict[tuple[str, str], str] = {
    # Google's MQM release spells two subtypes differently (mqm_ted_ende.tsv): same meaning.
    ("style", "awkward"): "Unnatural or awkward",
    ("terminology", "inconsistent use of terminology"): "Inconsistent use",
}
GOOGLE_SPELLING: dict[tuple[str, str], str] = {
    ("Style", "Unnatural or awkward"): "Awkward",
    ("Terminology", "Inconsistent use"): "Inconsistent use of terminology",
}
"""(category, our subtype) → Google's spelling, for the MQM TSV export."""


def _norm(label: str | None) -> str:
    return (label or "").strip().lower()


# Source error is a category for labels read from Google's files and answers written in them;
# the annotating page does not offer it (the typology lists what annotators pick from).
_CATEGORY_BY_NORM = {_norm(c): c for c in (*MQM_TYPOLOGY, SOURCE_ERROR)}


@dataclass(frozen=True)
class MqmWeights:
    """Penalty per error; a campaign may override any of them (JSON object, same keys)."""

    minor: float = 1.0
    major: float = 5.0
    critical: float = 10.0
    minor_punctuation: float = 0.1
    non_translation: float = 25.0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> MqmWeights:
        """Defaults overridden by ``data``; unknown keys or negative weights are errors."""
        if not data:
            return cls()
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown MQM weight(s): {', '.join(unknown)}")
        values: dict[str, float] = {}
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"MQM weight {key!r} must be a number, got {value!r}")
            if value < 0:
                raise ValueError(f"MQM weight {key!r} must be >= 0, got {value}")
            values[key] = float(value)
        return cls(**values)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


DEFAULT_WEIGHTS = MqmWeights()

MQM_CAP = 25.0
"""Penalty at and above which a segment maps to 0 (the weight of one Non-translation)."""


def canonical_category(category: str) -> str:
    """The typology's spelling of ``category``; accepts Google's ``Non-translation!`` form."""
    found = _CATEGORY_BY_NORM.get(_norm(category).rstrip("!"))
    if found is None:
        raise ValueError(f"unknown MQM category {category!r}")
    return found


def split_label(span: Mapping[str, Any]) -> tuple[str, str]:
    """(category, subcategory), also accepting Google's combined ``Fluency/Punctuation`` label."""
    category = str(span.get("category") or "")
    subcategory = str(span.get("subcategory") or "")
    if "/" in category and not subcategory:
        category, subcategory = category.split("/", 1)
    return category, subcategory


def canonical_labels(span: Mapping[str, Any]) -> tuple[str, str]:
    """(category, subcategory) in the typology's spelling, from ours or Google's labels.

    Accepts ``Fluency/Punctuation`` in ``category`` alone, ``Non-translation!``, Google's
    spellings of two subtypes (``Style/Awkward``, ``Terminology/Inconsistent use of
    terminology``) and ``Source error``; raises ``ValueError`` for an unknown label.
    """
    category, subcategory = split_label(span)
    canonical = canonical_category(category)
    if not subcategory:
        return canonical, ""
    subtypes = {_norm(s): s for s in MQM_TYPOLOGY.get(canonical, ())}
    found = subtypes.get(_norm(subcategory)) or GOOGLE_SUBCATEGORIES.get(
        (_norm(canonical), _norm(subcategory))
    )
    if found is None:
        raise ValueError(f"unknown subcategory {subcategory!r} for MQM category {canonical!r}")
    return canonical, found


def canonical_severity(severity: Any) -> str:
    """Google writes ``Minor``/``Major``/``Neutral``: severities compare lower-cased."""
    return _norm(severity) if isinstance(severity, str) else ""


def validate_span(span: Mapping[str, Any], *, allow_critical: bool = False) -> None:
    """Raise ``ValueError`` naming what is wrong with one MQM span's labels."""
    canonical_labels(span)
    severity = canonical_severity(span.get("severity"))
    allowed = (*(SEVERITIES if allow_critical else SEVERITIES[:2]), NEUTRAL)
    if severity not in allowed:
        raise ValueError(f"severity must be one of {', '.join(allowed)}, got {severity!r}")


def span_penalty(span: Mapping[str, Any], weights: MqmWeights = DEFAULT_WEIGHTS) -> float:
    """The penalty of one error span.

    1. A ``Neutral`` remark or a ``Source error`` costs nothing (Freitag et al. 2021: neither is
       the translation's fault).
    2. A Non-translation costs ``non_translation`` whatever its severity.
    3. A minor Fluency/Punctuation error costs ``minor_punctuation``.
    4. Otherwise the severity's weight.
    """
    category, subcategory = split_label(span)
    severity = canonical_severity(span.get("severity"))
    if severity == NEUTRAL or _norm(category) == _norm(SOURCE_ERROR):
        return 0.0
    if severity not in SEVERITIES:
        raise ValueError(f"unknown MQM severity {span.get('severity')!r}")
    if _norm(category).rstrip("!") == _norm(NON_TRANSLATION):
        return weights.non_translation
    if severity == "minor" and _norm(category) == "fluency" and _norm(subcategory) == "punctuation":
        return weights.minor_punctuation
    weight: float = getattr(weights, severity)
    return weight


def mqm_score(spans: Iterable[Mapping[str, Any]], weights: MqmWeights = DEFAULT_WEIGHTS) -> float:
    """The MQM penalty of one segment: the sum of its spans' penalties (0 = no error).

    Higher is worse, as in Google's published MQM scores. Rounded to 6 decimals so that sums of
    0.1 weights compare exactly (0.1 + 0.1 + 0.1 == 0.3).
    """
    return round(float(sum(span_penalty(span, weights) for span in spans)), 6)


def mqm_to_100(score: float, *, cap: float = MQM_CAP) -> float:
    """Map an MQM penalty to a 0–100 quality score (100 = no error): ``100 − 100·min(cap, s)/cap``.

    With the default cap of 25 this is ``100 − 4·min(25, s)``. Rationale (ADR 0004):

    1. 25 is the weight of a Non-translation, the worst verdict MQM gives one segment, so it maps
       to 0 — the ESA anchor "no meaning preserved" — and anything worse is clipped there.
    2. The map is linear below the cap, so differences of MQM penalty keep their meaning: one
       major error costs 20 points (→ 80), one minor 4 (→ 96), a minor punctuation 0.4 (→ 99.6).
       Seed 001 reports its MQM results on this 0–100 scale next to ESA (Table 6, App. D).
    3. It is monotone non-increasing and clipped to [0, 100], so it can be averaged with ESA
       scores and fed to estimators that expect "higher is easier".
    """
    if cap <= 0:
        raise ValueError("cap must be positive")
    if score < 0:
        raise ValueError(f"an MQM penalty is never negative, got {score}")
    return round(100.0 - 100.0 * min(cap, score) / cap, 6)


def mqm_score_100(
    spans: Iterable[Mapping[str, Any]], weights: MqmWeights = DEFAULT_WEIGHTS
) -> float:
    """:func:`mqm_score` mapped to 0–100 with :func:`mqm_to_100`."""
    return mqm_to_100(mqm_score(spans, weights))


def typology_choices() -> list[dict[str, Any]]:
    """The typology as a JSON-friendly list, for templates and the API."""
    return [
        {"category": category, "subcategories": list(subtypes)}
        for category, subtypes in MQM_TYPOLOGY.items()
    ]
