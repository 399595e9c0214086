"""The "Mine concepts" form. Django fields check types; ``lexical.mining.params`` (the same code
the API and ``mine_concepts`` use) checks the values and its errors go back next to the fields."""

from __future__ import annotations

from typing import Any

from django import forms

from lexical.mining.params import MiningParams
from lexical.models import ParallelCorpus

__all__ = ["MiningForm"]

_DEFAULTS = MiningParams()


class MiningForm(forms.Form):
    corpus = forms.ModelChoiceField(
        queryset=ParallelCorpus.objects.filter(status=ParallelCorpus.Status.READY).order_by("name")
    )
    min_variation_count = forms.IntegerField(
        initial=_DEFAULTS.min_variation_count,
        label="Minimum links per variation",
        help_text="A target lemma counts as a variation when aligned this often (paper: 50).",
    )
    min_variations = forms.IntegerField(
        initial=_DEFAULTS.min_variations,
        label="Minimum variations per concept",
        help_text="Source words with fewer such variations are dropped (paper: 2).",
    )
    min_entropy = forms.FloatField(
        initial=_DEFAULTS.min_entropy,
        label="Minimum entropy (nats)",
        help_text="Of the variation distribution; ln 2 ≈ 0.693 for two equal variations "
        "(paper: 0.69).",
    )
    max_examples = forms.IntegerField(
        initial=_DEFAULTS.max_examples,
        label="Examples kept per variation",
        help_text="The longest sentence pairs, for rule writing.",
    )
    example_token_limit = forms.IntegerField(
        initial=_DEFAULTS.example_token_limit,
        label="Example token limit",
        help_text="Examples have fewer source tokens than this (§3: under 50).",
    )
    stopword_top_n = forms.IntegerField(
        initial=_DEFAULTS.stopword_top_n,
        label="Stop words",
        help_text="Leave out punctuation, numbers and this many of each language's most "
        "frequent words (wordfreq); 0 keeps every word.",
    )
    chunk_size = forms.IntegerField(
        initial=_DEFAULTS.chunk_size,
        label="Pairs per round",
        help_text="Aligned together by eflomal: larger aligns better, smaller shows progress "
        "sooner.",
    )
    pos_pipeline = forms.CharField(
        required=False,
        label="spaCy pipeline for POS tags",
        help_text="An installed package name or a local path; empty: concepts are keyed by "
        "lemma alone.",
    )

    def to_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.cleaned_data.items() if k != "corpus"}

    def add_param_errors(self, errors: dict[str, str]) -> None:
        for name, message in errors.items():
            self.add_error(name if name in self.fields else None, message)
