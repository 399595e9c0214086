"""Read queries: engines, ledger totals per engine and per scope."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Count, Max, Q, QuerySet, Sum

from engines.kinds import LOCAL_MODEL_KINDS
from engines.local_models import comet
from engines.local_models import ctranslate2_backend as ct2
from engines.local_models.loading import bytes_on_disk
from engines.models import Engine, EngineCall, LocalModelLoad

__all__ = [
    "cost_by_scope",
    "cost_of_scope",
    "engine_totals",
    "engines_with_totals",
    "local_model_info",
    "queue_for_engines",
    "recent_calls",
    "scopes_of_engine",
    "totals_by_engine",
]

_TOTALS = {
    "calls": Sum("items"),
    "requests": Count("id", filter=Q(cache_hit=False)),
    "cache_hits": Sum("items", filter=Q(cache_hit=True)),
    "errors": Count("id", filter=~Q(error="")),
    "tokens_in": Sum("tokens_in"),
    "tokens_out": Sum("tokens_out"),
    "cost": Sum("cost"),
}
_ZERO = {
    "calls": 0,
    "requests": 0,
    "cache_hits": 0,
    "errors": 0,
    "tokens_in": 0,
    "tokens_out": 0,
    "cost": Decimal(0),
}


def _fill(row: dict[str, Any]) -> dict[str, Any]:
    return {
        key: (row.get(key) if row.get(key) is not None else zero) for key, zero in _ZERO.items()
    }


def cost_by_scope(scope: str) -> dict[str, Any]:
    """Totals of every engine call made for ``scope`` (e.g. ``"search_run:12"``).

    Keys: calls (items answered), requests (remote requests and local batches), cache_hits,
    errors, tokens_in, tokens_out, cost (Decimal), and ``engines``: the same per engine name.
    """
    rows = EngineCall.objects.filter(scope=scope)
    total = _fill(rows.aggregate(**_TOTALS))
    total["engines"] = {
        row["engine__name"]: _fill(row)
        for row in rows.values("engine__name").annotate(**_TOTALS).order_by("engine__name")
    }
    return total


def cost_of_scope(scope: str) -> Decimal:
    """The money spent by every engine call made for ``scope``: one aggregate on the scope
    index, for callers that need the total only (a search round, issue 19)."""
    total = EngineCall.objects.filter(scope=scope).order_by().aggregate(cost=Sum("cost"))["cost"]
    return total if total is not None else Decimal(0)


def totals_by_engine(scope: str | None = None) -> dict[str, dict[str, Any]]:
    """Totals per engine name, optionally within one scope."""
    rows = EngineCall.objects.all()
    if scope is not None:
        rows = rows.filter(scope=scope)
    return {
        row["engine__name"]: _fill(row)
        for row in rows.values("engine__name").annotate(**_TOTALS).order_by("engine__name")
    }


def engine_totals(engine: Engine) -> dict[str, Any]:
    return _fill(EngineCall.objects.filter(engine=engine).aggregate(**_TOTALS))


def engines_with_totals() -> QuerySet[Engine]:
    """Every engine with its call count, cost and last use (one query for the list page)."""
    return Engine.objects.annotate(
        total_calls=Sum("calls__items"),
        total_cost=Sum("calls__cost"),
        last_used_at=Max("calls__created_at"),
    ).order_by("name")


def recent_calls(engine: Engine, limit: int = 20) -> list[EngineCall]:
    return list(EngineCall.objects.filter(engine=engine).order_by("-created_at", "-id")[:limit])


def scopes_of_engine(engine: Engine, limit: int = 20) -> list[dict[str, Any]]:
    """The engine's costs per scope, most expensive first."""
    return list(
        EngineCall.objects.filter(engine=engine)
        .values("scope")
        .annotate(calls=Sum("items"), cost=Sum("cost"), last=Max("created_at"))
        .order_by("-cost", "scope")[:limit]
    )


def _uses_local_model(names: set[str], seen: set[str]) -> bool:
    """Whether any engine named (or a member of a crowd named, recursively) runs a local model."""
    names -= seen
    if not names:
        return False
    seen |= names
    members: set[str] = set()
    for kind, params in Engine.objects.filter(name__in=names).values_list("kind", "params"):
        if kind in LOCAL_MODEL_KINDS:
            return True
        if kind == Engine.Kind.ARTIFICIAL_CROWD and isinstance(params, dict):
            members |= set(params.get("translators", []))
            members |= set(params.get("quality_estimators", []))
    return _uses_local_model(members, seen)


def queue_for_engines(names: Iterable[str | None]) -> str:
    """The Celery queue for a job calling these engines: ``local_models`` when one of them (or a
    crowd member) runs a local model, so the model stays loaded in that queue's workers;
    otherwise the slow queue of engine calls."""
    wanted = {name for name in names if name}
    if _uses_local_model(wanted, set()):
        return settings.CELERY_LOCAL_MODELS_QUEUE
    return settings.CELERY_SLOW_QUEUE


def _model_format(engine: Engine) -> str:
    """Which reader runs the directory, as the engine page names it (read from its files)."""
    if ct2.uses_ctranslate2(engine.kind, engine.params):
        return "CTranslate2"
    if comet.is_comet(engine.kind, engine.params):
        return "COMET checkpoint"
    if engine.kind == "local_embeddings":
        return "sentence-transformers"
    return "Hugging Face transformers"


def local_model_info(engine: Engine) -> dict[str, Any] | None:
    """What the engine page shows of a local model: the configured device and dtype, the size
    on disk now, and the latest loads (device, parameters, load time, which process)."""
    if engine.kind not in LOCAL_MODEL_KINDS:
        return None
    path = str(engine.params.get("path", ""))
    return {
        "path": path,
        "format": _model_format(engine),
        "device": engine.params.get("device", "cpu"),
        "dtype": engine.params.get("compute_type") or engine.params.get("dtype", "float32"),
        "bytes_on_disk": bytes_on_disk(path) if path else None,
        "loads": list(LocalModelLoad.objects.filter(engine=engine)[:5]),
    }
