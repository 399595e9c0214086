"""Google's mt-metrics-eval layout, as ``mt_metrics_eval/data.py`` reads it (no Django).

One test set (``wmt22``, ...) is a folder::

    sources/{lp}.txt                     one source segment a line
    references/{lp}.{ref}.txt            line-aligned references (refA, refB, ...)
    system-outputs/{lp}/{system}.txt     line-aligned outputs; references appear here too
    documents/{lp}.docs                  "domain<TAB>doc_id" a line
    human-scores/{lp}.{name}.seg.score   "system<TAB>score" a line, each system's lines in
                                         source order; "None" = not scored
    human-scores/{lp}.{name}.{sys,domain}.score, metric-scores/...   (not read)

The whole release (``mt-metrics-eval-v2/``) holds one such folder per test set; a folder, an
archive of one test set or of the whole release are all read, and the test set is chosen when
there are several. The human score ``name`` (``mqm``, ``wmt``, ``wmt-z``, ``wmt-appraise``...,
dots allowed, as data.py parses it) is chosen too: every language pair of the test set that has
``{lp}.{name}.seg.score`` becomes a language pair of the dataset.

What the reader decides (data.py asserts; a user's import needs a reason):

* a system whose score lines are all ``None`` is left out (it cannot be ranked or evaluated),
  listed in the report; so is a system with an output but no score line. A scored system with
  no output file is kept without translations, listed in the report.
* ``None`` cells of kept systems stay unscored (NaN) and are counted.
* a system with more or fewer score lines than the source has lines is refused (the lines are
  positional: which segment a missing line belonged to cannot be known).
* systems that are references (their name is a ``references/{lp}.{ref}.txt``) are marked so.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from difficulty.dataset_format import (
    MAX_SYSTEM_NAME,
    DatasetFormatError,
    ParsedSegment,
    split_language_pair,
)
from difficulty.releases.text import decode_lines, parse_number, refuse
from formats.archives import ReleaseFiles

__all__ = ["MtmeRelease", "TestSet", "find_test_sets", "looks_like", "read_mtme", "wanted"]

_SEG_SCORE = re.compile(r"^(?P<lp>[^./]+)\.(?P<name>[^/]+)\.seg\.score$")
_PARTS = (
    re.compile(r"^sources/[^/]+\.txt$"),
    re.compile(r"^references/[^/]+\.txt$"),
    re.compile(r"^system-outputs/[^/]+/[^/]+\.txt$"),
    re.compile(r"^documents/[^/]+\.docs$"),
    re.compile(r"^human-scores/[^/]+\.seg\.score$"),
)


def _split_root(path: str) -> tuple[str, str]:
    """(test-set folder, path inside it) for a path of the layout, else ("", "")."""
    for marker in ("sources/", "references/", "system-outputs/", "documents/", "human-scores/"):
        at = path.find(marker)
        while at >= 0:
            if at == 0 or path[at - 1] == "/":
                root, inner = path[: max(at - 1, 0)], path[at:]
                if any(part.match(inner) for part in _PARTS):
                    return root, inner
            at = path.find(marker, at + 1)
    return "", ""


def wanted(path: str, test_set: str = "") -> bool:
    """Whether an archive member is one the reader may need (metric scores are not), in the
    folder of ``test_set`` when one is named."""
    root, inner = _split_root(path)
    return bool(inner) and (not test_set or root.rsplit("/", 1)[-1] == test_set)


@dataclass
class TestSet:
    root: str  # the folder inside the release ("" when the release is the test set itself)
    top: str = ""  # the release's name, which names a test set at its top
    scores: dict[str, list[str]] = field(default_factory=dict)  # name -> language pairs

    @property
    def label(self) -> str:
        return self.root.rsplit("/", 1)[-1] or self.top or "(top folder)"


def find_test_sets(names: Sequence[str], top: str = "") -> dict[str, TestSet]:
    """Test sets by the name of their folder (``top`` for the release's own top folder):
    folders with ``sources/`` and segment-level ``human-scores/``."""
    sources: set[str] = set()
    found: dict[str, TestSet] = {}
    for path in names:
        root, inner = _split_root(path)
        if inner.startswith("sources/"):
            sources.add(root)
        match = _SEG_SCORE.match(inner.removeprefix("human-scores/"))
        if inner.startswith("human-scores/") and match:
            test_set = found.setdefault(root, TestSet(root, top))
            test_set.scores.setdefault(match["name"], []).append(match["lp"])
    for test_set in found.values():
        test_set.scores = {name: sorted(lps) for name, lps in sorted(test_set.scores.items())}
    return {ts.label: ts for root, ts in sorted(found.items()) if root in sources}


def looks_like(names: Sequence[str]) -> bool:
    return bool(find_test_sets(names))


@dataclass
class MtmeRelease:
    segments: list[ParsedSegment]
    report: dict[str, Any]
    reference_systems: set[str]


def _choose(
    files: ReleaseFiles, test_set: str, human_score: str, language_pairs: Sequence[str]
) -> tuple[TestSet, str, list[str]]:
    test_sets = find_test_sets(files.names(), top=files.label)
    if not test_sets:
        raise DatasetFormatError(
            [f"{files.label}: no mt-metrics-eval test set (sources/ and human-scores/*.seg.score)"]
        )
    if test_set:
        if test_set not in test_sets:
            raise DatasetFormatError(
                [f"{files.label}: no test set {test_set!r}; found {', '.join(test_sets)}"]
            )
        chosen = test_sets[test_set]
    elif len(test_sets) > 1:
        raise DatasetFormatError(
            [f"{files.label} holds several test sets; choose one of {', '.join(test_sets)}"]
        )
    else:
        chosen = next(iter(test_sets.values()))
    names = chosen.scores
    offered = ", ".join(f"{n} ({', '.join(lps)})" for n, lps in names.items())
    if not human_score:
        if len(names) > 1:
            raise DatasetFormatError(
                [f"choose the human score to import; {chosen.label} has {offered}"]
            )
        human_score = next(iter(names))
    if human_score not in names:
        raise DatasetFormatError(
            [f"{chosen.label} has no human score {human_score!r}; it has {offered}"]
        )
    lps = names[human_score]
    if language_pairs:
        missing = [lp for lp in language_pairs if lp not in lps]
        if missing:
            raise DatasetFormatError(
                [
                    f"{chosen.label} has no {human_score} scores for {', '.join(missing)}; "
                    f"it has them for {', '.join(lps)}"
                ]
            )
        lps = [lp for lp in lps if lp in language_pairs]
    return chosen, human_score, lps


def read_mtme(
    files: ReleaseFiles,
    *,
    human_score: str = "",
    test_set: str = "",
    language_pairs: Sequence[str] = (),
) -> MtmeRelease:
    """Every language pair of the chosen test set with the chosen segment-level human score;
    refuses with the names on offer when a choice is missing or wrong."""
    chosen, human_score, lps = _choose(files, test_set, human_score, language_pairs)
    report: dict[str, Any] = {
        "release": "mt-metrics-eval",
        "test_set": chosen.label,
        "human_score": human_score,
        "human_scores_found": list(chosen.scores),
        "none_cells": 0,
        "blank_score_lines": 0,
        "unscored_systems": {},
        "scored_without_output": {},
        "references": {},
    }
    segments: list[ParsedSegment] = []
    references: set[str] = set()
    for lp in lps:
        pair = _LanguagePair(files, chosen.root, lp, human_score)
        segments += pair.read(report)
        references |= pair.reference_names
    return MtmeRelease(segments, report, references)


def _strip_empty(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if v}


class _LanguagePair:
    def __init__(self, files: ReleaseFiles, root: str, lp: str, human_score: str) -> None:
        self.files, self.lp, self.human_score = files, lp, human_score
        self.prefix = f"{root}/" if root else ""
        self.names = set(files.names())
        try:
            self.src_lang, self.tgt_lang = split_language_pair(lp)
        except ValueError as exc:
            raise refuse(self._path(f"sources/{lp}.txt"), None, str(exc)) from None
        self.reference_names: set[str] = set()

    def _path(self, inner: str) -> str:
        return self.prefix + inner

    def _lines(self, inner: str) -> list[str]:
        path = self._path(inner)
        if path not in self.names:
            raise refuse(path, None, f"is missing, though human-scores/ scores {self.lp}")
        return decode_lines(path, self.files.read(path))

    def _aligned(self, inner: str, n: int) -> list[str]:
        lines = self._lines(inner)
        if len(lines) != n:
            raise refuse(
                self._path(inner),
                None,
                f"has {len(lines)} lines where sources/{self.lp}.txt has {n}: the files must be "
                "line-aligned",
            )
        return lines

    def _texts(self, folder: str, n: int) -> dict[str, list[str]]:
        texts = {}
        for path in sorted(self.names):
            if path.startswith(self._path(folder)) and path.endswith(".txt"):
                inner = path[len(self.prefix) :]
                name = inner[len(folder) : -len(".txt")]
                if "/" not in name:
                    texts[name] = self._aligned(inner, n)
        return texts

    def read(self, report: dict[str, Any]) -> list[ParsedSegment]:
        sources = self._lines(f"sources/{self.lp}.txt")
        n = len(sources)
        if not n:
            raise refuse(self._path(f"sources/{self.lp}.txt"), None, "is empty")
        docs = self._documents(n)
        refs = self._texts(f"references/{self.lp}.", n)
        self.reference_names = set(refs)
        outputs = self._texts(f"system-outputs/{self.lp}/", n)
        scores = self._scores(n, report)
        kept = {s: v for s, v in scores.items() if any(x is not None for x in v)}
        if not kept:
            raise refuse(
                self._path(f"human-scores/{self.lp}.{self.human_score}.seg.score"),
                None,
                "scores no segment (every line is None)",
            )
        unscored = sorted(set(scores) - set(kept)) + sorted(set(outputs) - set(scores))
        report["unscored_systems"] = _strip_empty(report["unscored_systems"] | {self.lp: unscored})
        report["scored_without_output"] = _strip_empty(
            report["scored_without_output"] | {self.lp: sorted(set(kept) - set(outputs))}
        )
        report["references"] = report["references"] | {self.lp: sorted(refs)}
        report["none_cells"] += sum(v.count(None) for v in kept.values())
        first_ref = refs[min(refs)] if refs else None
        return [
            ParsedSegment(
                line_number=i + 1,
                lp=self.lp,
                src_lang=self.src_lang,
                tgt_lang=self.tgt_lang,
                source=sources[i],
                scores={system: values[i] for system, values in kept.items()},
                translations={s: outputs[s][i] for s in kept if s in outputs},
                segment_key=str(i + 1),
                doc_id=docs[i][1] if docs else "",
                domain=docs[i][0] if docs else "",
                reference=first_ref[i] if first_ref else "",
            )
            for i in range(n)
        ]

    def _documents(self, n: int) -> list[tuple[str, str]] | None:
        inner = f"documents/{self.lp}.docs"
        if self._path(inner) not in self.names:
            return None
        docs = []
        for number, line in enumerate(self._aligned(inner, n), start=1):
            fields = line.split()
            if len(fields) != 2:
                raise refuse(
                    self._path(inner), number, f"2 fields expected (domain, doc), got {len(fields)}"
                )
            if len(fields[0]) > 100 or len(fields[1]) > 255:
                raise refuse(self._path(inner), number, "a domain or document name is too long")
            docs.append((fields[0], fields[1]))
        return docs

    def _scores(self, n: int, report: dict[str, Any]) -> dict[str, list[float | None]]:
        path = self._path(f"human-scores/{self.lp}.{self.human_score}.seg.score")
        scores: dict[str, list[float | None]] = defaultdict(list)
        for number, line in enumerate(decode_lines(path, self.files.read(path)), start=1):
            fields = line.split()
            if not fields:
                report["blank_score_lines"] += 1
                continue
            if len(fields) != 2:
                raise refuse(path, number, f"2 fields expected (system, score), got {len(fields)}")
            system, value = fields
            if len(system) > MAX_SYSTEM_NAME:
                raise refuse(path, number, f"system name longer than {MAX_SYSTEM_NAME} characters")
            score = None if value == "None" else parse_number(value, path, number)
            scores[system].append(score)
            if len(scores[system]) > n:
                raise refuse(
                    path,
                    number,
                    f"system {system!r} has more than {n} score lines (sources/{self.lp}.txt "
                    f"has {n} lines)",
                )
        short = {s: len(v) for s, v in scores.items() if len(v) != n}
        if short:
            system, count = next(iter(short.items()))
            raise refuse(
                path,
                None,
                f"system {system!r} has {count} score lines where sources/{self.lp}.txt has "
                f"{n}: the lines are positional, so the missing ones cannot be placed (write "
                "None for an unscored segment)",
            )
        return dict(scores)
