"""Items from a difficulty dataset's hardest subset (seed 002 §3: the B lowest-scored segments).

Per language pair the segments are ranked by their mean score over the dataset's systems, lowest
first, and the first ``fraction`` of them (``difficulty.dec.subset_budget``, the evaluation's
budget rule) become candidates with their translations and scores.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from challenge_sets.sources.base import Candidate, Field, ItemSource, SourceError
from difficulty.dec import subset_budget
from difficulty.models import DifficultyDataset, DifficultySegment

ORIGIN = "difficulty_dataset"


def _mean(scores: dict[str, Any]) -> float | None:
    values = [float(v) for v in scores.values() if isinstance(v, int | float)]
    return fmean(values) if values else None


class DifficultyDatasetSource(ItemSource):
    name = ORIGIN
    label = "Difficulty dataset (hardest subset)"
    fields = (
        Field("dataset", "Difficulty dataset", "choice"),
        Field("fraction", "Hardest fraction", "float", required=False, default=0.25,
              help="Share of each language pair's segments, lowest mean score first."),
    )  # fmt: skip

    def choices(self, field_name: str) -> list[tuple[str, str]]:
        return [
            (str(d.pk), f"{d.name} ({d.n_segments} segments)")
            for d in DifficultyDataset.objects.order_by("name")
        ]

    def candidates(self, params: dict[str, Any]) -> list[Candidate]:
        try:
            dataset = DifficultyDataset.objects.get(pk=int(str(params.get("dataset"))))
        except (TypeError, ValueError, DifficultyDataset.DoesNotExist):
            raise SourceError("no such difficulty dataset") from None
        try:
            fraction = float(params.get("fraction") or 0.25)
            subset_budget(1, fraction)
        except ValueError:
            raise SourceError("fraction must be in (0, 1]") from None
        snapshot = {"id": dataset.pk, "name": dataset.name, "origin": dataset.origin,
                    "source_file_name": dataset.source_file_name,
                    "source_campaign": dataset.source_campaign_name,
                    "perfect_score": dataset.perfect_score}  # fmt: skip
        candidates = []
        for pair in dataset.language_pairs.order_by("code"):
            segments = list(DifficultySegment.objects.filter(language_pair=pair).order_by("row"))
            scored = [(m, s) for s in segments if (m := _mean(s.scores)) is not None]
            scored.sort(key=lambda pair_: pair_[0])  # stable: ties keep segment order
            budget = subset_budget(len(segments), fraction)
            for rank, (mean, segment) in enumerate(scored[:budget], start=1):
                candidates.append(
                    Candidate(
                        source=segment.source,
                        src_lang=pair.src_lang,
                        tgt_lang=pair.tgt_lang,
                        origin=ORIGIN,
                        origin_ref=f"dataset:{dataset.pk}:segment:{segment.pk}",
                        translations=dict(segment.translations),
                        automatic_difficulty=round(dataset.perfect_score - mean, 6),
                        provenance={
                            "kind": ORIGIN,
                            "dataset": snapshot,
                            "segment": {
                                "id": segment.pk,
                                "row": segment.row,
                                "segment_key": segment.segment_key,
                                "doc_id": segment.doc_id,
                                "domain": segment.domain,
                                "reference": segment.reference,
                            },
                            "hardest_subset": {
                                "fraction": fraction,
                                "rank": rank,
                                "language_pair": pair.code,
                            },
                            "automatic_scores": segment.scores,
                        },
                    )
                )
        if not candidates:
            raise SourceError(f"dataset {dataset.name!r} has no scored segment")
        return candidates
