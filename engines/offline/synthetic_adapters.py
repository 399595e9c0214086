"""The adapter of the synthetic world (``engines.offline.synthetic_world``): a SIMULATION.

One local kind, ``synthetic`` (difficulty), answered in-process through the call path's
``local`` ledger rows (no cache, no cost). Its texts are ids ``synthetic:<topic>:<draw>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Self

import numpy as np

from engines.adapters import Adapter, Resolve, short_text
from engines.callpath import CallPath
from engines.interfaces import EngineError
from engines.models import Engine
from engines.offline.synthetic_world import SyntheticWorld

__all__ = ["SyntheticEngine", "parse_synthetic_id", "synthetic_id"]

_SYNTHETIC_ID = re.compile(r"^synthetic:(\d+):(\d+)$")


def synthetic_id(topic: int, draw: int) -> str:
    """The text id of draw number ``draw`` from synthetic topic ``topic``."""
    return f"synthetic:{topic}:{draw}"


def parse_synthetic_id(text: str) -> tuple[int, int]:
    match = _SYNTHETIC_ID.match(text.strip())
    if not match:
        raise EngineError(
            f"{short_text(text)!r} is not a synthetic text id ('synthetic:<topic>:<draw>')",
            permanent=True,
        )
    return int(match.group(1)), int(match.group(2))


@lru_cache(maxsize=16)
def _world(params_json: str) -> SyntheticWorld:
    return SyntheticWorld.from_params(json.loads(params_json))


class SyntheticEngine(Adapter):
    """SYNTHETIC difficulty of seed 000 §3.3: quality = 100 − d(topic, draw), replayable."""

    def __init__(self, engine: Engine, path: CallPath, world: SyntheticWorld) -> None:
        super().__init__(engine, path)
        self.world = world

    @classmethod
    def build(cls, engine: Engine, path: CallPath, resolve: Resolve) -> Self:
        return cls(engine, path, cls.world_of(engine))

    @classmethod
    def world_of(cls, engine: Engine) -> SyntheticWorld:
        """The world the engine's parameters describe, cached per parameter set, so its topic
        means are drawn once per process."""
        return _world(json.dumps(engine.params, sort_keys=True))

    def estimate(
        self, texts: Sequence[str], src_lang: str = "", tgt_lang: str | None = None
    ) -> list[float]:
        def run() -> list[float]:
            ids = [parse_synthetic_id(text) for text in texts]
            if not ids:
                return []
            topics = np.fromiter((t for t, _ in ids), dtype=np.int64, count=len(ids))
            draws = np.fromiter((d for _, d in ids), dtype=np.int64, count=len(ids))
            bad = np.flatnonzero((topics >= self.world.n_topics) | (draws >= 2**32))
            if bad.size:
                raise EngineError(
                    f"synthetic text id {texts[int(bad[0])]!r} is outside this world "
                    f"({self.world.n_topics} topics)",
                    permanent=True,
                )
            difficulty = self.world.difficulty_of(topics, draws)
            return (100.0 - difficulty).tolist()

        return self.path.local("estimate", len(texts), run)
