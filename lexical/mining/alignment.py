"""Word alignment with eflomal (Östling & Tiedemann 2016), in process, one chunk of pairs at a
time. The paper uses AWESOME (a multilingual BERT aligner); eflomal needs no model weights.

eflomal is a Bayesian sampler: it learns its lexical model from the sentences it is given, so a
chunk aligns better the bigger it is. Chunks of 20k–50k pairs are a trade-off: large enough for
the frequent words the filters keep (they need 50 links each), bounded in memory whatever the
corpus size. Rare words in a small chunk align worse; they are also the ones the count filter
drops.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["Links", "align"]

Links = list[tuple[int, int]]


def _read_links(path: Path, n: int) -> list[set[tuple[int, int]]]:
    out: list[set[tuple[int, int]]] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            pairs = set()
            for item in line.split():
                i, _, j = item.partition("-")
                pairs.add((int(i), int(j)))
            out.append(pairs)
    if len(out) != n:
        raise RuntimeError(f"eflomal wrote {len(out)} alignment lines for {n} sentence pairs")
    return out


def align(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]]) -> list[Links]:
    """Links (source index, target index) per pair: eflomal's forward and reverse directions
    intersected, the high-precision symmetrisation (a wrong link would count as a variation).
    Every sentence must have at least one token."""
    if len(src) != len(tgt):
        raise ValueError("source and target have different numbers of sentences")
    if not src:
        return []
    if any(not s for s in src) or any(not t for t in tgt):
        raise ValueError("every sentence needs at least one token")
    import eflomal

    with tempfile.TemporaryDirectory(prefix="hardset-align-") as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        aligner = eflomal.Aligner()
        aligner.align(
            [" ".join(tokens) + "\n" for tokens in src],
            [" ".join(tokens) + "\n" for tokens in tgt],
            links_filename_fwd=str(fwd),
            links_filename_rev=str(rev),
            quiet=True,
        )
        forward = _read_links(fwd, len(src))
        reverse = _read_links(rev, len(src))
    return [sorted(f & r) for f, r in zip(forward, reverse, strict=True)]
