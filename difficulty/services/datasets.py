"""Write use-cases for difficulty datasets (seed 002).

* :func:`import_difficulty_dataset`: a WMT-style JSONL file → a dataset, all or nothing.
* :func:`import_mqm_tsv_dataset`: a Google MQM TSV → a dataset, all or nothing.
* :func:`build_difficulty_dataset_from_campaign`: an annotation campaign's human results → a
  dataset.

Files in any format, and the field's multi-file releases, are dispatched by
:mod:`difficulty.services.dataset_files`.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypedDict, Unpack

import numpy as np
from django.db import IntegrityError, transaction

from annotation import protocols
from annotation import selectors as annotation_selectors
from annotation.formats import FormatError, google_mqm
from annotation.scoring import mqm_to_100
from annotation.selectors import ItemResult
from difficulty.dataset_format import (
    ParsedSegment,
    ReferenceRule,
    parse_jsonl,
    source_key,
    split_language_pair,
    textless_source_key,
)
from difficulty.models import (
    DifficultyDataset,
    DifficultyLanguagePair,
    DifficultySegment,
    DifficultySystem,
    matrix_to_bytes,
)
from difficulty.releases import mtme, wmt_da
from difficulty.releases.judgments import JudgmentRows, standardise, table_to_bytes
from formats.archives import ReleaseFiles

logger = logging.getLogger(__name__)


# Line numbers kept in an import report: enough to find the rows, never a file's worth.
REPORTED_LINES = 20


class DifficultyDatasetError(Exception):
    """A request about difficulty datasets that cannot be done; the message says why."""


# --- Datasets --------------------------------------------------------------------------------


def check_dataset_name(name: str) -> str:
    """The stripped name, or :class:`DifficultyDatasetError` when it is empty, long or taken."""
    name = name.strip()
    if not name:
        raise DifficultyDatasetError("a dataset needs a name")
    if len(name) > 200:
        raise DifficultyDatasetError("a dataset name has at most 200 characters")
    if DifficultyDataset.objects.filter(name=name).exists():
        raise DifficultyDatasetError(f"a difficulty dataset named {name!r} exists already")
    return name


class DatasetFields(TypedDict, total=False):
    """What every import takes besides its file and the name: the dataset row's own fields
    and ``on_written(dataset)``, run inside the writing transaction (a background import marks
    its job done there)."""

    description: str
    reference_rule: ReferenceRule | None
    source_file_name: str
    perfect_score: float
    created_by: Any
    on_written: Callable[[DifficultyDataset], None] | None


def import_difficulty_dataset(
    lines: Iterable[bytes | str],
    *,
    name: str,
    **fields: Unpack[DatasetFields],
) -> DifficultyDataset:
    """Import a WMT-style JSONL file (see ``difficulty.dataset_format``); all or nothing.

    Raises :class:`DatasetFormatError` (every bad line with its number) or
    :class:`DifficultyDatasetError`; in both cases nothing is written. ``fields``: see
    :class:`DatasetFields`.
    """
    name = check_dataset_name(name)
    segments = parse_jsonl(lines)
    return _write_dataset(segments, name=name, **fields)


def import_mqm_tsv_dataset(
    data: bytes,
    *,
    name: str,
    language_pair: str = "",
    member_name: str = "",
    **fields: Unpack[DatasetFields],
) -> DifficultyDataset:
    """A dataset from a Google MQM TSV file (one row per error per rater); all or nothing.

    Each rater's MQM penalty of a (segment, system) is mapped to 0–100 with the platform's map
    (``100 − 4·min(25, penalty)``, ADR 0004), and the segment's score for that system is the mean
    over its raters; the raw mean penalty and the number of raters are kept as extra fields, and
    each rater's score as an individual judgment (raw: the 0–100 score; z: standardised per
    rater over the file). The rows name no languages: ``language_pair`` (e.g. ``en-de``) says
    them, or else the file name as Google writes it (``mqm_ted_ende.tsv``; ``member_name`` is
    the TSV's name inside an archive, tried first). Rows whose ``<v>…</v>`` marks do not pair up
    are scored all the same, and ``HOTW-test`` rows are checks, never scored: both are counted
    in the dataset's ``import_report``, as are (system, segment) cells rated only by checks.
    """
    name = check_dataset_name(name)
    source_file_name = fields.get("source_file_name", "")
    report: dict = {}
    if not language_pair:
        language_pair = (
            google_mqm.language_pair_in_name(member_name)
            or google_mqm.language_pair_in_name(source_file_name)
            or ""
        )
        report["language_pair_from_file_name"] = language_pair
    if not language_pair:
        raise DifficultyDatasetError(
            f"a Google MQM TSV names no languages, nor does its file name "
            f"{member_name or source_file_name!r} (as mqm_ted_ende.tsv does): give the language "
            "pair, e.g. en-de"
        )
    try:
        src_lang, tgt_lang = split_language_pair(language_pair)
        mqm_segments = google_mqm.read_tsv(data)
    except (ValueError, FormatError) as exc:
        where = f"{member_name}: " if member_name else ""
        raise DifficultyDatasetError(f"{where}{exc}") from None
    segments, judgments, unrated = _mqm_segments(mqm_segments, language_pair, src_lang, tgt_lang)
    if not segments:
        raise DifficultyDatasetError("the file has no rated segment (only checks)")
    unbalanced = google_mqm.unbalanced_lines(mqm_segments)
    checks = google_mqm.check_lines(mqm_segments)
    if member_name:
        report["member"] = member_name  # line numbers below count in this file of the archive
    report |= {
        "unbalanced_mark_rows": len(unbalanced),
        "unbalanced_mark_lines": unbalanced[:REPORTED_LINES],
    }
    if checks:
        report |= {"checks": {"HOTW-test": len(checks)}, "check_lines": checks[:REPORTED_LINES]}
    if unrated:
        report["unrated_cells"] = unrated
    scale = (
        "Scores: each rater's MQM penalty mapped to 0–100 by 100 − 4·min(25, penalty) "
        "(ADR 0004), averaged over the segment's raters; mqm_penalty holds the raw mean penalty."
    )
    return _write_dataset(
        segments,
        name=name,
        note=scale,
        import_report=report,
        judgments={language_pair: judgments},
        **fields,
    )


def import_mtme_dataset(
    files: ReleaseFiles,
    *,
    name: str,
    human_score: str = "",
    test_set: str = "",
    language_pairs: Sequence[str] = (),
    **fields: Unpack[DatasetFields],
) -> DifficultyDataset:
    """A dataset from an mt-metrics-eval test set (``difficulty.releases.mtme``): each language
    pair with the chosen segment-level human score, outputs as translations, the first
    reference as the reference; systems named by ``references/`` are references whatever
    ``reference_rule`` says. All or nothing; a missing or unknown choice is refused with the
    names on offer."""
    name = check_dataset_name(name)
    release = mtme.read_mtme(
        files, human_score=human_score, test_set=test_set, language_pairs=language_pairs
    )
    rule = fields.get("reference_rule") or ReferenceRule()
    extra = tuple(sorted(release.reference_systems - set(rule.names)))
    fields["reference_rule"] = ReferenceRule(names=(*rule.names, *extra), prefixes=rule.prefixes)
    note = (
        f"Scores: mt-metrics-eval human score {release.report['human_score']!r} "
        f"(segment level) of test set {release.report['test_set']}."
    )
    return _write_dataset(
        release.segments, name=name, note=note, import_report=release.report, **fields
    )


def import_wmt_da_dataset(
    files: ReleaseFiles,
    *,
    name: str,
    score_kind: str = "z",
    language_pairs: Sequence[str] = (),
    **fields: Unpack[DatasetFields],
) -> DifficultyDataset:
    """A dataset from a WMT crowd-DA release (``difficulty.releases.wmt_da``): per-segment means
    (``score_kind`` ``z`` or ``raw``) as scores, the individual judgments beside them. All or
    nothing."""
    name = check_dataset_name(name)
    release = wmt_da.read_wmt_da(files, score_kind=score_kind, language_pairs=language_pairs)
    note = (
        f"Scores: WMT crowd DA, the mean {'z-score' if score_kind == 'z' else 'raw score'} of "
        "each system's segment (ad-seg-scores); the release holds no texts."
    )
    return _write_dataset(
        release.segments,
        name=name,
        note=note,
        import_report=release.report,
        judgments=release.judgments,
        **fields,
    )


def _mqm_segments(
    mqm_segments: list[google_mqm.MqmSegment], lp: str, src_lang: str, tgt_lang: str
) -> tuple[list[ParsedSegment], JudgmentRows, int]:
    """One segment per (document, segment id) with each system's mean over its raters, every
    rater's score as a judgment, and how many (system, segment) cells only checks rated."""
    grouped: dict[tuple[str, str], int] = {}
    segments: list[ParsedSegment] = []
    judgments = JudgmentRows()
    unrated = 0
    for mqm in mqm_segments:
        penalties = google_mqm.rater_penalties(mqm)
        if not penalties:
            unrated += 1
            continue
        index = grouped.setdefault((mqm.doc, mqm.seg_id), len(segments))
        if index == len(segments):
            segments.append(
                ParsedSegment(
                    line_number=mqm.line_number, lp=lp, src_lang=src_lang, tgt_lang=tgt_lang,
                    source=mqm.source, scores={}, segment_key=mqm.seg_id, doc_id=mqm.doc,
                    extra={"mqm_penalty": {}, "n_raters": {}},
                )
            )  # fmt: skip
        segment = segments[index]
        if not google_mqm.same_text(segment.source, mqm.source):
            raise DifficultyDatasetError(
                f"line {mqm.line_number}: segment {mqm.seg_id} of {mqm.doc} has another source "
                f"than on line {segment.line_number}"
            )
        scores = {rater: mqm_to_100(p) for rater, p in penalties.items()}
        segment.scores[mqm.system] = float(np.mean(list(scores.values())))
        segment.translations[mqm.system] = mqm.target
        segment.extra["mqm_penalty"][mqm.system] = float(np.mean(list(penalties.values())))
        segment.extra["n_raters"][mqm.system] = len(penalties)
        for rater, score in sorted(scores.items()):
            judgments.add(index, mqm.system, rater, score, math.nan, repeat=False)
    judgments.z = list(standardise(np.array(judgments.raw), np.array(judgments.annotator)))
    return segments, judgments, unrated


def _write_dataset(
    segments: list[ParsedSegment],
    *,
    name: str,
    origin: str = DifficultyDataset.Origin.IMPORT,
    description: str = "",
    note: str = "",
    reference_rule: ReferenceRule | None = None,
    source_file_name: str = "",
    perfect_score: float = 100.0,
    created_by=None,
    campaign_id: int | None = None,
    campaign_name: str = "",
    import_report: dict | None = None,
    judgments: Mapping[str, JudgmentRows] | None = None,
    on_written: Callable[[DifficultyDataset], None] | None = None,
) -> DifficultyDataset:
    """Write a dataset in one transaction; ``judgments[lp].segment`` indexes that pair's
    segments in the order given; ``note`` (what the import says about the scores) follows the
    description a person gave."""
    reference_rule = reference_rule or ReferenceRule()
    if note:
        description = (description.strip() + "\n\n" + note).strip()
    by_pair: dict[str, list[ParsedSegment]] = defaultdict(list)
    for segment in segments:
        by_pair[segment.lp].append(segment)
    extra_fields = sorted({key for segment in segments for key in segment.extra})
    all_systems: set[str] = set()
    try:
        with transaction.atomic():
            dataset = DifficultyDataset.objects.create(
                name=name,
                description=description,
                origin=origin,
                source_file_name=source_file_name[:255],
                source_campaign_id=campaign_id,
                source_campaign_name=campaign_name[:200],
                reference_rule=reference_rule.as_dict(),
                extra_fields=extra_fields,
                import_report=import_report or {},
                perfect_score=perfect_score,
                n_segments=len(segments),
                n_language_pairs=len(by_pair),
                created_by=created_by,
            )
            for code in sorted(by_pair):
                all_systems |= _write_pair(
                    dataset, code, by_pair[code], reference_rule, (judgments or {}).get(code)
                )
            dataset.n_systems = len(all_systems)
            dataset.save(update_fields=["n_systems", "updated_at"])
            if on_written is not None:
                on_written(dataset)
    except IntegrityError as exc:
        # Two imports with one name at once: the unique name is the referee.
        if DifficultyDataset.objects.filter(name=name).exists():
            raise DifficultyDatasetError(
                f"a difficulty dataset named {name!r} exists already"
            ) from exc
        raise
    return dataset


def _write_pair(
    dataset: DifficultyDataset,
    code: str,
    segments: list[ParsedSegment],
    reference_rule: ReferenceRule,
    judgment_rows: JudgmentRows | None = None,
) -> set[str]:
    systems = sorted({system for segment in segments for system in segment.scores})
    column = {system: j for j, system in enumerate(systems)}
    matrix = np.full((len(segments), len(systems)), np.nan)
    for row, segment in enumerate(segments):
        for system, score in segment.scores.items():
            if score is not None:
                matrix[row, column[system]] = score
    table, annotators = (judgment_rows or JudgmentRows()).table(column)
    language_pair = DifficultyLanguagePair.objects.create(
        dataset=dataset,
        code=code,
        src_lang=segments[0].src_lang,
        tgt_lang=segments[0].tgt_lang,
        n_segments=len(segments),
        scores=matrix_to_bytes(matrix),
        judgments=table_to_bytes(table) if len(table) else b"",
        judgment_annotators=annotators,
        n_judgments=len(table),
    )
    scored = ~np.isnan(matrix)
    DifficultySystem.objects.bulk_create(
        DifficultySystem(
            language_pair=language_pair,
            name=system,
            column=j,
            is_reference=reference_rule.is_reference(system),
            n_scored=int(scored[:, j].sum()),
            mean_score=float(matrix[scored[:, j], j].mean()) if scored[:, j].any() else None,
        )
        for j, system in enumerate(systems)
    )
    DifficultySegment.objects.bulk_create(
        (
            DifficultySegment(
                dataset=dataset,
                language_pair=language_pair,
                row=row,
                line_number=segment.line_number,
                segment_key=segment.segment_key,
                doc_id=segment.doc_id,
                domain=segment.domain,
                source=segment.source,
                source_key=_source_key(segment, code),
                reference=segment.reference,
                translations=segment.translations,
                scores=segment.scores,
                extra=segment.extra,
            )
            for row, segment in enumerate(segments)
        ),
        batch_size=500,
    )
    return set(systems)


def _source_key(segment: ParsedSegment, code: str) -> str:
    if segment.source.strip():
        return source_key(segment.src_lang, segment.source)
    # A release without texts (WMT DA) or an empty source line: the segment's id stands for its
    # source, so that textless segments do not all count as one source.
    return textless_source_key(code, segment.segment_key or str(segment.line_number))


def build_difficulty_dataset_from_campaign(
    campaign,
    *,
    name: str,
    description: str = "",
    reference_rule: ReferenceRule | None = None,
    created_by=None,
) -> DifficultyDataset:
    """A dataset from an ESA or MQM campaign's submitted scores: items' systems × mean score.

    Each (language pair, document, segment id, source) becomes a segment and each item's system
    a column; the human score is the item's mean 0–100 score over annotators who pass quality
    control, read through ``annotation.selectors.item_results`` like the per-item export
    (attention checks and tutorials are left out; items no such annotator has scored yet are
    skipped). An unfinished campaign can be used;
    the description says how complete it was.
    """
    name = check_dataset_name(name)
    if campaign.protocol not in protocols.scored():
        raise DifficultyDatasetError(
            f"campaign {campaign.name!r} uses the {campaign.protocol} protocol, which has no "
            f"scores (scored protocols: {', '.join(protocols.scored())})"
        )
    left_out = 0  # items with submitted scores, none of them counted

    def counting(results: Iterable[ItemResult]) -> Iterator[ItemResult]:
        nonlocal left_out
        for result in results:
            left_out += result.mean_score is None and result.n_judgments < result.n_submitted
            yield result

    segments = _segments_from_items(counting(annotation_selectors.item_results(campaign)), campaign)
    if not segments:
        if left_out:
            # Scores exist but none counts: say why rather than claim there are none.
            raise DifficultyDatasetError(
                f"campaign {campaign.name!r} has no regular item scored by an annotator who "
                f"passes quality control yet ({left_out} item"
                f"{'s have' if left_out != 1 else ' has'} only scores of annotators whose "
                f"verdict is fail or pending)"
            )
        raise DifficultyDatasetError(
            f"campaign {campaign.name!r} has no regular item with a submitted score yet"
        )
    progress = annotation_selectors.campaign_progress(campaign)
    note = (
        f"Built from campaign {campaign.name!r} ({campaign.protocol}) when "
        f"{progress['items_done']} of {progress['items']} items had all their annotations."
    )
    return _write_dataset(
        segments,
        name=name,
        description=description,
        note=note,
        origin=DifficultyDataset.Origin.CAMPAIGN,
        reference_rule=reference_rule,
        created_by=created_by,
        campaign_id=campaign.pk,
        campaign_name=campaign.name,
    )


def _segments_from_items(items: Iterable[ItemResult], campaign) -> list[ParsedSegment]:
    grouped: dict[tuple[str, str, str, str], ParsedSegment] = {}
    for item in items:
        if item.mean_score is None:
            continue
        src_lang = item.src_lang or campaign.src_lang
        tgt_lang = item.tgt_lang or campaign.tgt_lang
        lp = f"{src_lang}-{tgt_lang}"
        try:
            split_language_pair(lp)
        except ValueError as exc:
            raise DifficultyDatasetError(
                f"item {item.item_id}: {exc} (set the items' or the campaign's languages)"
            ) from exc
        key = (lp, item.doc_id, item.seg_id, item.source)
        segment = grouped.get(key)
        if segment is None:
            segment = grouped[key] = ParsedSegment(
                line_number=0,
                lp=lp,
                src_lang=src_lang,
                tgt_lang=tgt_lang,
                source=item.source,
                scores={},
                segment_key=item.seg_id[:100],
                doc_id=item.doc_id,
                extra={"n_annotations": {}, "item_ids": {}},
            )
        system = item.system or "unnamed"
        if system in segment.scores:
            raise DifficultyDatasetError(
                f"items {segment.extra['item_ids'][system]} and {item.item_id} both hold "
                f"system {system!r}'s translation of segment {item.seg_id!r} "
                f"({item.doc_id!r}); give them distinct segment ids or systems"
            )
        segment.scores[system] = float(item.mean_score)
        segment.translations[system] = item.target
        segment.extra["n_annotations"][system] = item.n_judgments
        segment.extra["item_ids"][system] = item.item_id
    return list(grouped.values())
