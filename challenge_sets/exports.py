"""Exports of a frozen version, every one a pure function of the version's stored texts.

Formats (``FORMATS``): the items JSONL with full provenance; WMT-style JSONL and plain sources
for MT test sets; the validation annotations as annotation exported them at freeze time (ESA
JSONL, or Google's MQM TSV); the manifest; and a Hugging Face datasets-style zip
(``data/<lp>.jsonl`` per language pair, ``README.md`` dataset card with the statistics,
``manifest.json``) that ``datasets.load_dataset("json", data_files=...)`` reads. Zip entries
have a fixed date and order, so the zip is byte-identical too.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from challenge_sets.models import FrozenVersion

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
}


class ExportError(ValueError):
    pass


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
