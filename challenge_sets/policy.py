"""A challenge set's validation policy and its acceptance rule (pure Python, no Django).

The policy says how humans validate the set's items (protocol, overlap, the QC rule the campaign
applies to its annotators) and which human result proposes ``accept`` or ``reject``:

* ``difficulty_at_least``: human difficulty (100 − the mean 0–100 score of annotators who pass
  QC, averaged over the item's translations) ≥ ``threshold`` — a hard text stays hard for people;
* ``majority_is_attested``: the majority answer of a choice item equals its attested label
  (seed 004: an item enters the dataset when the majority picks the attested variation).

Below ``min_agreement`` (0–1, see ``annotation.selectors.ItemResult.agreement``) the proposal is
``review``: people disagreed too much for a machine to decide. A proposal is only that; a
curator's decision is what counts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

DIFFICULTY_AT_LEAST = "difficulty_at_least"
MAJORITY_IS_ATTESTED = "majority_is_attested"
RULES = {
    DIFFICULTY_AT_LEAST: "human difficulty ≥ threshold",
    MAJORITY_IS_ATTESTED: "majority = attested label",
}
PROTOCOL_RULES = {"esa": DIFFICULTY_AT_LEAST, "mqm": DIFFICULTY_AT_LEAST}
ACCEPT, REJECT, REVIEW = "accept", "reject", "review"


class PolicyError(ValueError):
    """A policy that cannot be used; ``errors`` maps field names to reasons."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class ValidationPolicy:
    protocol: str = "esa"
    overlap: int = 3
    rule: str = DIFFICULTY_AT_LEAST
    threshold: float = 50.0
    min_agreement: float = 0.0
    # The QC rule, applied by the campaign to each annotator (annotation/qc.py).
    attention_checks: int = 0
    qc_min_pass_rate: float = 0.8
    qc_min_seconds_per_item: float = 3.0

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None) -> ValidationPolicy:
        """A checked policy; unknown keys and bad values raise :class:`PolicyError`."""
        raw = dict(raw or {})
        known = {f.name: f for f in fields(cls)}
        errors = {key: "unknown setting" for key in raw if key not in known}
        values: dict[str, Any] = {}
        for name, spec in known.items():
            if name not in raw:
                continue
            caster = {"int": int, "float": float, "str": str}[str(spec.type)]
            try:
                values[name] = caster(raw[name])
            except (TypeError, ValueError):
                errors[name] = f"must be a {spec.type}"
        if errors:
            raise PolicyError(errors)
        policy = cls(**values)
        policy.check()
        return policy

    def check(self) -> None:
        errors = {}
        if self.protocol not in ("esa", "mqm", "choice"):
            errors["protocol"] = "must be esa, mqm or choice"
        if not 1 <= self.overlap <= 20:
            errors["overlap"] = "must be 1 to 20"
        if self.rule not in RULES:
            errors["rule"] = f"must be one of {', '.join(RULES)}"
        elif self.protocol == "choice" and self.rule != MAJORITY_IS_ATTESTED:
            errors["rule"] = "choice items are judged by majority_is_attested"
        elif self.protocol != "choice" and self.rule != DIFFICULTY_AT_LEAST:
            errors["rule"] = "esa and mqm items are judged by difficulty_at_least"
        if not 0.0 <= self.threshold <= 100.0:
            errors["threshold"] = "must be 0 to 100"
        if not 0.0 <= self.min_agreement <= 1.0:
            errors["min_agreement"] = "must be 0 to 1"
        if not 0 <= self.attention_checks <= 1000:
            errors["attention_checks"] = "must be 0 to 1000"
        if not 0.0 <= self.qc_min_pass_rate <= 1.0:
            errors["qc_min_pass_rate"] = "must be 0 to 1"
        if self.qc_min_seconds_per_item < 0:
            errors["qc_min_seconds_per_item"] = "must be ≥ 0"
        if errors:
            raise PolicyError(errors)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        if self.rule == MAJORITY_IS_ATTESTED:
            rule = "majority = attested label"
        else:
            rule = f"human difficulty ≥ {self.threshold:g}"
        agreement = f", agreement ≥ {self.min_agreement:g}" if self.min_agreement else ""
        annotators = f"{self.overlap} annotator{'s' if self.overlap != 1 else ''}"
        return f"{self.protocol}, {annotators}, {rule}{agreement}"


@dataclass(frozen=True)
class Proposal:
    verdict: str  # accept, reject or review
    reason: str


def propose(
    policy: ValidationPolicy,
    *,
    human_difficulty: float | None,
    agreement: float | None,
    majority: str | None,
    attested: str,
    n_judgments: int,
) -> Proposal | None:
    """What the policy proposes for one item's human result; ``None`` with no judgment yet."""
    if n_judgments == 0:
        return None
    if policy.min_agreement > 0 and (agreement is None or agreement < policy.min_agreement):
        shown = "undefined" if agreement is None else f"{agreement:.2f}"
        return Proposal(REVIEW, f"agreement {shown} < {policy.min_agreement:g}")
    if policy.rule == MAJORITY_IS_ATTESTED:
        if not majority or majority == "tie":
            return Proposal(REVIEW, "no majority")
        if majority == attested:
            return Proposal(ACCEPT, f"majority = attested ({attested})")
        return Proposal(REJECT, f"majority {majority!r} ≠ attested {attested!r}")
    if human_difficulty is None:
        return None
    if human_difficulty >= policy.threshold:
        return Proposal(ACCEPT, f"human difficulty {human_difficulty:.1f} ≥ {policy.threshold:g}")
    return Proposal(REJECT, f"human difficulty {human_difficulty:.1f} < {policy.threshold:g}")
