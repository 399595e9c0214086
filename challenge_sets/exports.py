"""Exports of a frozen version, every one a pure function of the version's stored texts.

Formats (``FORMATS``): the items JSONL with full provenance; WMT-style JSONL and plain sources
for MT test sets; the validation annotations as annotation exported them at freeze time (ESA
JSONL, or Google's MQM TSV); the manifest; and a Hugging Face datasets-style zip
(``data/<lp>.jsonl`` per language pair, ``README.md`` dataset card with the statistics,
``manifest.json``) that ``datasets.load_dataset("json", data_files=...)`` reads. Zip entries
have a fixed date and order, so the zip is byte-identical too.

A version of lexical-selection items (``sources/lexical_study.py``) also exports as DTAiLS
(seed 004's released shape, ``concept, source language text, target language text,
variations, label``, byte-compatible with the paper's files and so not formula-guarded) and as
the extended CSV: the same columns, then the curator's decision, both validations (the
set's and the study's: majority, votes, confidence, agreement) and the concept's provenance,
every cell formula-guarded.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from challenge_sets.models import FrozenVersion
from formats.spreadsheet import csv_text
from lexical.dtails.exports import EXTENDED_HEADER
from lexical.dtails.format import DtailsRow, write_csv

CHUNK_CHARS = 64 * 1024
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Format:
    label: str
    suffix: str
    content_type: str


FORMATS = {
    "jsonl": Format("Items with provenance (JSONL)", "items.jsonl", "application/jsonl"),
    "wmt-jsonl": Format("WMT-style sources (JSONL)", "wmt.jsonl", "application/jsonl"),
    "sources": Format("Plain sources (one per line)", "sources.txt", "text/plain"),
    "annotations": Format("Validation annotations", "annotations", "text/plain"),
    "hf": Format("Hugging Face dataset folder (zip)", "hf.zip", "application/zip"),
    "manifest": Format("Manifest (JSON)", "manifest.json", "application/json"),
    "dtails": Format("DTAiLS dataset (released CSV shape)", "dtails.csv", "text/csv"),
    "dtails-extended": Format(
        "DTAiLS with votes and provenance (CSV)", "dtails-extended.csv", "text/csv"
    ),
}
LEXICAL_ORIGIN = "lexical_selection"
LEXICAL_FORMATS = frozenset({"dtails", "dtails-extended"})


class ExportError(ValueError):
    pass


def formats_for(version: FrozenVersion) -> dict[str, Format]:
    """The formats this version has: annotations when it kept some, DTAiLS when every item is
    a lexical-selection item."""
    by_origin = json.loads(version.manifest)["counts"]["by_origin"]
    lexical = set(by_origin) == {LEXICAL_ORIGIN}
    return {
        fmt: spec
        for fmt, spec in FORMATS.items()
        if (fmt != "annotations" or version.annotations_format)
        and (fmt not in LEXICAL_FORMATS or lexical)
    }


def records(version: FrozenVersion) -> Iterator[dict[str, Any]]:
    for line in version.items_jsonl.splitlines():
        yield json.loads(line)


def _chunks(text: str) -> Iterator[bytes]:
    for start in range(0, len(text), CHUNK_CHARS):
        yield text[start : start + CHUNK_CHARS].encode("utf-8")


def _lines(lines: Iterator[str]) -> Iterator[bytes]:
    block: list[str] = []
    for line in lines:
        block.append(line)
        if len(block) == 500:
            yield "".join(block).encode("utf-8")
            block = []
    if block:
        yield "".join(block).encode("utf-8")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _wmt(version: FrozenVersion) -> Iterator[str]:
    manifest = json.loads(version.manifest)
    for record in records(version):
        row = {
            "lp": f"{record['src_lang']}-{record['tgt_lang']}",
            "src_lang": record["src_lang"],
            "tgt_lang": record["tgt_lang"],
            "doc_id": f"{manifest['slug']}-v{version.number}",
            "seg_id": record["id"],
            "src": record["source"],
            "origin": record["origin"],
        }
        yield json.dumps(row, ensure_ascii=False) + "\n"


def hf_row(record: dict[str, Any]) -> dict[str, Any]:
    """A flat row with one schema for every item, as Arrow wants: nested parts become JSON."""
    return {
        "id": record["id"],
        "src_lang": record["src_lang"],
        "tgt_lang": record["tgt_lang"],
        "source": record["source"],
        "translations": [
            {"system": system, "text": text}
            for system, text in sorted(record["translations"].items())
        ],
        "origin": record["origin"],
        "automatic_difficulty": record["automatic_difficulty"],
        "human_difficulty": record["human_difficulty"],
        "agreement": record["agreement"],
        "n_judgments": record["n_judgments"],
        "attested": record.get("attested", ""),
        "choices": record.get("choices", []),
        "provenance": json.dumps(record["provenance"], ensure_ascii=False, sort_keys=True),
    }


def dataset_card(version: FrozenVersion, by_pair: dict[str, int]) -> str:
    m = json.loads(version.manifest)
    configs = "".join(
        f"- config_name: {pair}\n  data_files:\n  - split: test\n    path: data/{pair}.jsonl\n"
        for pair in sorted(by_pair)
    )

    def fmt(value) -> str:
        return "—" if value is None else f"{value:.2f}"

    rows = "".join(f"| {pair} | {n} |\n" for pair, n in sorted(by_pair.items()))
    origins = "".join(f"| {o} | {n} |\n" for o, n in m["counts"]["by_origin"].items())
    return (
        f"---\nlicense: {m['licence'].lower()}\npretty_name: {json.dumps(m['name'])}\n"
        f"task_categories:\n- translation\nconfigs:\n{configs}---\n\n"
        f"# {m['name']} (v{m['version']})\n\n{m['description']}\n\n"
        f"Hard machine-translation test items curated with Hardset, validated by people "
        f"({m['policy_description']}), accepted by a curator, frozen {m['frozen_at']}.\n\n"
        f"## Statistics\n\n- items: {m['counts']['items']}\n"
        f"- human judgments (annotators who passed quality control): {m['counts']['judgments']}\n"
        f"- human difficulty: mean {fmt(m['human_difficulty']['mean'])}, "
        f"min {fmt(m['human_difficulty']['min'])}, max {fmt(m['human_difficulty']['max'])}\n"
        f"- automatic difficulty: mean {fmt(m['automatic_difficulty']['mean'])}\n"
        f"- agreement: mean {fmt(m['agreement']['mean'])}, min {fmt(m['agreement']['min'])}\n\n"
        f"| language pair | items |\n| --- | --- |\n{rows}\n"
        f"| origin | items |\n| --- | --- |\n{origins}\n"
        f"## Provenance\n\n{m['provenance_notes'] or 'See each row’s `provenance` (JSON).'}\n\n"
        f"## Licence\n\n{m['licence']}\n\n"
        f"## Checksum\n\nSHA-256 of the items JSONL: `{m['checksum']}`\n\n"
        f'```python\nimport datasets\nds = datasets.load_dataset("json", '
        f'data_files="data/*.jsonl", split="train")\n```\n'
    )


def _lexical_records(version: FrozenVersion) -> list[dict[str, Any]]:
    """Every record, checked to be a lexical-selection item; else the export is refused."""
    found: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for record in records(version):
        provenance = record.get("provenance") or {}
        lexical = (
            provenance.get("kind") == LEXICAL_ORIGIN
            and record.get("attested")
            and len(record.get("choices") or []) >= 2
            and (provenance.get("concept") or {}).get("lemma")
            and provenance.get("target_text")
        )
        (found if lexical else others).append(record)
    if others:
        named = ", ".join(r["id"] for r in others[:5]) + (", …" if len(others) > 5 else "")
        raise ExportError(
            f"DTAiLS holds lexical-selection items only (concept, target sentence, variations, "
            f"attested label); {len(others)} item(s) of v{version.number} are not: {named}"
        )
    return found


def _dtails_row(record: dict[str, Any]) -> DtailsRow:
    provenance = record["provenance"]
    return DtailsRow(
        concept=provenance["concept"]["lemma"],
        source=record["source"],
        target=provenance["target_text"],
        variations=tuple(record["choices"]),
        label=record["attested"],
    )


# The study's extended CSV (lexical.dtails.exports), then what the set adds: the curator's
# decision, the set's own validation, the study and where the concept came from.
DTAILS_EXTENDED_HEADER = (
    *EXTENDED_HEADER,
    "decision", "decision_reason", "validation_majority", "validation_agreement",
    "validation_judgments", "study", "study_confidence_mean", "concept_id", "concept_origin",
    "concept_entropy", "mining_job", "corpus",
)  # fmt: skip


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _extended_row(record: dict[str, Any]) -> list[Any]:
    """One item in :data:`DTAILS_EXTENDED_HEADER`'s columns; the study's votes and confidence
    ratings by annotator pseudonym, as the study's own extended CSV has them."""
    provenance, human = record["provenance"], record.get("human") or {}
    concept = provenance["concept"]
    study_item = provenance.get("study_item") or {}
    result = provenance.get("study_result") or {}
    confidence = result.get("confidence") or {}
    mined = concept.get("mined") or {}
    agreement = result.get("agreement")
    row = _dtails_row(record)
    return [
        record["id"], study_item.get("doc_id", ""), study_item.get("seg_id", ""), row.concept,
        concept.get("pos", ""), row.source, row.target, str(list(row.variations)), row.label,
        _json(result.get("votes", {})), _json(confidence.get("by_annotator", {})),
        result.get("n_counted", ""), _json(result.get("excluded", {})),
        result.get("majority") or "", result.get("majority_votes", ""), result.get("tie", ""),
        True, "" if agreement is None else round(agreement, 6),
        record["decision"]["status"], record["decision"]["reason"], human.get("majority"),
        record["agreement"], record["n_judgments"], (provenance.get("study") or {}).get(
            "campaign", ""), confidence.get("mean"), concept.get("id"), concept.get("origin", ""),
        concept.get("entropy"), mined.get("mining_job"), (mined.get("corpus") or {}).get("name"),
    ]  # fmt: skip


def _zip_bytes(version: FrozenVersion) -> bytes:
    by_pair: dict[str, list[str]] = {}
    for record in records(version):
        pair = f"{record['src_lang']}-{record['tgt_lang']}"
        by_pair.setdefault(pair, []).append(json.dumps(hf_row(record), ensure_ascii=False) + "\n")
    files = {f"data/{pair}.jsonl": "".join(lines) for pair, lines in sorted(by_pair.items())}
    files["README.md"] = dataset_card(version, {p: len(v) for p, v in by_pair.items()})
    files["manifest.json"] = version.manifest
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(f"{_folder(version)}/{name}", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name].encode("utf-8"))
    return buffer.getvalue()


def _folder(version: FrozenVersion) -> str:
    return f"{json.loads(version.manifest)['slug']}-v{version.number}"


def filename(version: FrozenVersion, fmt: str) -> str:
    suffix = FORMATS[fmt].suffix
    if fmt == "annotations":
        suffix = "mqm.tsv" if version.annotations_format == "mqm-tsv" else "annotations.jsonl"
    return f"{_folder(version)}-{suffix}"


def stream(version: FrozenVersion, fmt: str) -> Iterator[bytes]:
    """The bytes of one export of a frozen version, in chunks."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "jsonl":
        return _chunks(version.items_jsonl)
    if fmt == "wmt-jsonl":
        return _lines(_wmt(version))
    if fmt == "sources":
        return _lines(_one_line(r["source"]) + "\n" for r in records(version))
    if fmt == "annotations":
        if not version.annotations:
            raise ExportError("this version has no validation annotations")
        return _chunks(version.annotations)
    if fmt == "manifest":
        return _chunks(version.manifest)
    if fmt == "dtails":
        return _chunks_of_bytes(write_csv(_dtails_row(r) for r in _lexical_records(version)))
    if fmt == "dtails-extended":
        rows = (_extended_row(r) for r in _lexical_records(version))
        return _chunks(csv_text(DTAILS_EXTENDED_HEADER, rows, lineterminator="\n"))
    return _chunks_of_bytes(_zip_bytes(version))


def _chunks_of_bytes(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), CHUNK_CHARS):
        yield data[start : start + CHUNK_CHARS]


def content_type(version: FrozenVersion, fmt: str) -> str:
    if fmt == "annotations":
        # The annotations are whatever annotation's exporter wrote: ESA JSONL or MQM TSV.
        if version.annotations_format == "mqm-tsv":
            return "text/tab-separated-values; charset=utf-8"
        return "application/jsonl; charset=utf-8"
    kind = FORMATS[fmt].content_type
    return kind if kind == "application/zip" else f"{kind}; charset=utf-8"
