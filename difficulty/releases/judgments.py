"""Individual human judgments of one language pair, kept beside its score matrix (no Django).

The matrix holds one score per (segment, system), a mean; WMT21–23 ranked systems with a
one-sided rank-sum test on the *individual* judgments, z-scored per annotator for DA (Kocmi et
al. 2022, "Findings of WMT22", §3; Graham et al. 2017, "Can machine translation systems be
evaluated by the crowd alone", §4 for the per-worker standardisation). So releases that carry
them (WMT crowd-DA ``ad-XXen-good-stnd.csv``, Google's MQM TSVs with a row per rater) keep them
as a compact table:

=========  ========  ==========================================================================
field      dtype     meaning
=========  ========  ==========================================================================
row        int32     the segment's row of the pair's matrix
column     int32     the system's column
annotator  int32     index into the pair's list of annotator ids
raw        float64   the judgment on the release's raw scale (NaN where the release has none)
z          float64   the judgment standardised per annotator
repeat     bool      a repeated item (WMT DA ``REPEAT``), shown again to check consistency
=========  ========  ==========================================================================

stored as ``.npy`` bytes (never pickled). 100,000 judgments take 2.5 MB.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "JUDGMENT_DTYPE",
    "JudgmentRows",
    "by_system",
    "standardise",
    "table_from_bytes",
    "table_to_bytes",
]

JUDGMENT_DTYPE = np.dtype(
    [
        ("row", "<i4"),
        ("column", "<i4"),
        ("annotator", "<i4"),
        ("raw", "<f8"),
        ("z", "<f8"),
        ("repeat", "?"),
    ]
)


@dataclass
class JudgmentRows:
    """Judgments as a reader collects them: ``segment`` indexes the pair's list of parsed
    segments (the matrix row once written), ``system`` names the column."""

    segment: list[int] = field(default_factory=list)
    system: list[str] = field(default_factory=list)
    annotator: list[str] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    z: list[float] = field(default_factory=list)
    repeat: list[bool] = field(default_factory=list)

    def add(
        self, segment: int, system: str, annotator: str, raw: float, z: float, repeat: bool
    ) -> None:
        self.segment.append(segment)
        self.system.append(system)
        self.annotator.append(annotator)
        self.raw.append(raw)
        self.z.append(z)
        self.repeat.append(repeat)

    def __len__(self) -> int:
        return len(self.segment)

    def table(self, columns: dict[str, int]) -> tuple[np.ndarray, list[str]]:
        """The structured table (rows in reading order) and the annotator ids it indexes;
        ``columns`` maps each system named here to its matrix column."""
        annotators = sorted(set(self.annotator))
        index = {name: i for i, name in enumerate(annotators)}
        table = np.empty(len(self), dtype=JUDGMENT_DTYPE)
        table["row"] = self.segment
        table["column"] = [columns[name] for name in self.system]
        table["annotator"] = [index[name] for name in self.annotator]
        table["raw"] = self.raw
        table["z"] = self.z
        table["repeat"] = self.repeat
        return table, annotators


def standardise(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each value minus its group's mean, over its group's sample standard deviation (ddof 1,
    as R's ``sd`` in WMT's scripts); 0 in a group of one value or with no spread, where a
    judgment says nothing about the annotator's scale. NaN values stay NaN and are left out of
    their group's mean and deviation."""
    values = np.asarray(values, dtype=np.float64)
    groups = np.asarray(groups)
    z = np.full(values.shape, np.nan)
    known = ~np.isnan(values)
    codes, inverse = np.unique(groups[known], return_inverse=True)
    counts = np.bincount(inverse, minlength=len(codes)).astype(np.float64)
    means = np.bincount(inverse, weights=values[known], minlength=len(codes)) / counts
    deviations = values[known] - means[inverse]
    squares = np.bincount(inverse, weights=deviations**2, minlength=len(codes))
    with np.errstate(divide="ignore", invalid="ignore"):
        sds = np.sqrt(squares / (counts - 1))
    spread = sds[inverse]
    usable = np.isfinite(spread) & (spread > 1e-12)
    z[known] = np.where(usable, deviations / np.where(usable, spread, 1.0), 0.0)
    return z


def table_to_bytes(table: np.ndarray) -> bytes:
    if table.dtype != JUDGMENT_DTYPE:
        raise ValueError(f"a judgment table has dtype {JUDGMENT_DTYPE}, not {table.dtype}")
    buffer = io.BytesIO()
    np.save(buffer, table, allow_pickle=False)
    return buffer.getvalue()


def table_from_bytes(data: bytes | memoryview) -> np.ndarray:
    """The table saved by :func:`table_to_bytes`; an empty table for empty bytes."""
    if not len(data):
        return np.empty(0, dtype=JUDGMENT_DTYPE)
    table: np.ndarray = np.load(io.BytesIO(bytes(data)), allow_pickle=False)
    return table


def by_system(
    table: np.ndarray, systems: list[str], *, kind: str = "z", include_repeats: bool = False
) -> dict[str, np.ndarray]:
    """Each system's judgments of ``kind`` (``"z"`` or ``"raw"``) in table order, NaN left out;
    ``systems[j]`` names column ``j``. Every system is a key, with an empty array when it has
    no judgment."""
    if kind not in ("z", "raw"):
        raise ValueError(f"kind must be 'z' or 'raw', got {kind!r}")
    keep = ~np.isnan(table[kind])
    if not include_repeats:
        keep &= ~table["repeat"]
    kept = table[keep]
    order = np.argsort(kept["column"], kind="stable")
    columns = kept["column"][order]
    values = kept[kind][order]
    bounds = np.searchsorted(columns, np.arange(len(systems) + 1))
    return {name: values[bounds[j] : bounds[j + 1]].copy() for j, name in enumerate(systems)}
