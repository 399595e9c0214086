"""The protocol registry: which protocols campaigns may use, by name.

A protocol is a :class:`~annotation.protocols.base.Protocol` subclass in its own module plus
its template (``templates/annotation/protocols/<name>.html``); adding one is one more
:func:`register` line below (or a call from an ``AppConfig.ready()``). ``Campaign.protocol``
holds the name; :func:`get` turns it back into the protocol.

The module-level functions :func:`normalize_item` and :func:`clean_answer` take a protocol
name and are kept for callers that have only the name (imports, ``Item.clean``, tests).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from annotation.protocols.base import (
    NON_SCORABLE,
    NON_SCORABLE_REASON,
    AnswerContext,
    Cleaned,
    Protocol,
    is_non_scorable,
    non_scorable_columns,
)
from annotation.protocols.choice import CONFIDENCE_LEVELS, MAX_CHOICES, Choice
from annotation.protocols.esa import ANCHORS as ESA_ANCHORS
from annotation.protocols.esa import ESA
from annotation.protocols.esa import LOW_SCORE as ESA_LOW_SCORE
from annotation.protocols.esa import SEVERITIES as ESA_SEVERITIES
from annotation.protocols.esa_mqm import ESAMQM
from annotation.protocols.items import ITEM_FIELDS, KINDS, ItemError
from annotation.protocols.mqm import MQM
from annotation.protocols.questionnaire import Questionnaire
from annotation.protocols.spans import grapheme_boundary, span_errors, spans_overlap
from annotation.protocols.translation import Translation

__all__ = [
    "CONFIDENCE_LEVELS", "ESA_ANCHORS", "ESA_LOW_SCORE", "ESA_SEVERITIES", "ITEM_FIELDS",
    "KINDS", "MAX_CHOICES", "NON_SCORABLE", "NON_SCORABLE_REASON", "AnswerContext",
    "ItemError", "Protocol", "UnknownProtocol", "choices", "clean_answer", "get",
    "grapheme_boundary", "is_non_scorable", "is_registered", "names", "non_scorable_columns",
    "normalize_item", "register", "span_errors", "spans_overlap", "unregister",
]  # fmt: skip

NAME_MAX_LENGTH = 32
"""``Campaign.protocol``'s column width."""
_NAME = re.compile(r"[a-z][a-z0-9_-]*")

_registry: dict[str, Protocol] = {}


class UnknownProtocol(LookupError):
    """A protocol name nobody registered."""

    def __init__(self, name: Any):
        self.name = name
        known = ", ".join(_registry) or "none"
        super().__init__(f"unknown protocol {name!r}; registered protocols: {known}")

    def __str__(self) -> str:
        return str(self.args[0])


def register(protocol: Protocol) -> Protocol:
    """Make ``protocol`` available to campaigns under ``protocol.name``; returns it.

    Raises ``ValueError`` for a name that is taken or is not a short lowercase identifier.
    """
    name = getattr(protocol, "name", None)
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > NAME_MAX_LENGTH:
        raise ValueError(
            f"protocol name {name!r} must be lowercase letters, digits, '-' or '_' "
            f"(at most {NAME_MAX_LENGTH} characters)"
        )
    if name in _registry:
        raise ValueError(f"a protocol named {name!r} is already registered")
    _registry[name] = protocol
    return protocol


def unregister(name: str) -> None:
    """Forget a protocol (tests that register their own); unknown names raise."""
    if name not in _registry:
        raise UnknownProtocol(name)
    del _registry[name]


def get(name: str) -> Protocol:
    """The registered protocol called ``name``; :class:`UnknownProtocol` otherwise."""
    try:
        return _registry[name]
    except (KeyError, TypeError):
        raise UnknownProtocol(name) from None


def is_registered(name: Any) -> bool:
    return isinstance(name, str) and name in _registry


def names() -> list[str]:
    """Registered protocol names, in registration order."""
    return list(_registry)


def scored() -> list[str]:
    """Names of the protocols whose answers carry a 0–100 score (what difficulty reads)."""
    return [name for name, protocol in _registry.items() if protocol.has_scores]


def choices() -> list[tuple[str, str]]:
    """(name, label) of every registered protocol, for forms, serializers and filters."""
    return [(name, protocol.label) for name, protocol in _registry.items()]


def normalize_item(
    protocol: str, raw: Any, defaults: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``get(protocol).normalize_item``; an unknown protocol is an :class:`ItemError`."""
    if not is_registered(protocol):
        raise ItemError(f"unknown protocol {protocol!r}")
    return get(protocol).normalize_item(raw, defaults)


def clean_answer(
    protocol: str,
    answer: Any,
    *,
    target: str = "",
    n_choices: int = 0,
    multi_select: bool = False,
    severities: tuple[str, ...] | list[str] = ESA_SEVERITIES,
    ask_confidence: bool = True,
    source: str = "",
) -> Cleaned:
    """``get(protocol).clean`` with the settings as keywords; see :meth:`Protocol.clean`."""
    if not is_registered(protocol):
        return {}, [f"unknown protocol {protocol!r}"], []
    context = AnswerContext(
        target, n_choices, multi_select, tuple(severities), ask_confidence, source
    )
    return get(protocol).clean(answer, context)


register(ESA())
register(MQM())
register(Choice())
register(ESAMQM())
register(Translation())
register(Questionnaire())
