"""The sections this package draws on other apps' pages (``core.sections``), which may not import
``ranking``: a frozen version's row on its challenge set's page, a finished DEC evaluation's page
(per estimator), an MT-breaker comparison's page.

The evaluation and comparison sections read their latest analyses in one query each, drawn
with the page (also when a polled evaluation page swaps in its finished state). A version's row
is a slot that htmx fills on load from a URL of ours (``views.version_section``): whether a
version can be measured at all is read from its items, which stays off the set page's own
request; without JavaScript the slot is a link to the new-analysis form.
"""

from __future__ import annotations

from typing import Any

from challenge_sets.access import may_curate
from core.sections import register_section
from ranking.subsets.selectors import comparison_summary, evaluation_summary, may_measure

__all__ = ["register_sections"]


def _version(request: Any, version: Any) -> dict[str, Any] | None:
    return {"version": version} if may_curate(request.user) else None


def _evaluation(request: Any, evaluation: Any) -> dict[str, Any] | None:
    if not may_measure(request.user) or evaluation.status != "done":
        return None
    return evaluation_summary(request.user, evaluation)


def _comparison(request: Any, name: Any) -> dict[str, Any] | None:
    if not may_measure(request.user) or not name:
        return None
    return comparison_summary(request.user, name)


def register_sections() -> None:
    register_section("challenge_sets.version", "discrimination",
                     "ranking/discrimination_slot_version.html", _version)  # fmt: skip
    register_section("difficulty.evaluation", "discrimination",
                     "ranking/discrimination_slot_evaluation.html", _evaluation)  # fmt: skip
    register_section("search.breaker_comparison", "discrimination",
                     "ranking/discrimination_slot_comparison.html", _comparison)  # fmt: skip
