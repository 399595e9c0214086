"""The new-ranking form: parse the request; ``ranking.services.start_ranking`` checks the rest.

The source list, the language pairs and the scores offered depend on the input chosen (and the
source): the page re-renders its source fields through htmx when either changes, or through a
plain GET button without JavaScript.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.urls import reverse_lazy

from ranking import selectors
from ranking.models import SystemRanking
from ranking.services import MAX_RESAMPLES, MAX_SEED

SOURCE_FIELD: dict[str, str] = {
    SystemRanking.InputKind.DATASET: "dataset",
    SystemRanking.InputKind.CAMPAIGN: "campaign",
    SystemRanking.InputKind.VERSION: "version",
    SystemRanking.InputKind.VERSION_QE: "version",
}


# The source fields are drawn again when the input or the source changes (htmx, no script of
# ours): the whole form goes with the request, and only its source part comes back.
_REFRESH = {
    "hx-get": reverse_lazy("ranking:ranking_new"),
    "hx-include": "closest form",
    "hx-target": "#source-fields",
    "hx-swap": "outerHTML",
}


class _VersionChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.challenge_set.name} v{obj.number} ({obj.n_items} items)"


class RankingForm(forms.Form):
    input_kind = forms.ChoiceField(
        label="Rank the systems of",
        choices=SystemRanking.InputKind.choices,
        initial=SystemRanking.InputKind.DATASET,
        widget=forms.RadioSelect,
    )
    dataset: forms.ModelChoiceField = forms.ModelChoiceField(
        queryset=None, required=False, empty_label="— choose —"
    )
    campaign: forms.ModelChoiceField = forms.ModelChoiceField(
        queryset=None, required=False, empty_label="— choose —"
    )
    version = _VersionChoice(queryset=None, required=False, empty_label="— choose —")
    language_pair = forms.ChoiceField(label="Language pair", required=False, choices=[])
    score = forms.ChoiceField(label="Score", required=False, choices=[])
    include_references = forms.BooleanField(
        label="Rank human references too", required=False, initial=False
    )
    test = forms.ChoiceField(choices=SystemRanking.Test.choices, initial="wilcoxon")
    pairs = forms.ChoiceField(choices=SystemRanking.Pairs.choices, initial="all")
    n_resamples = forms.IntegerField(
        label="Resamples", initial=1000, min_value=1, max_value=MAX_RESAMPLES,
        help_text="Permutation and bootstrap tests only.",
    )  # fmt: skip
    alpha = forms.FloatField(label="α", initial=0.05, min_value=0.0001, max_value=0.5)
    holm = forms.BooleanField(label="Holm correction", required=False)
    seed = forms.IntegerField(initial=0, min_value=0, max_value=MAX_SEED)
    name = forms.CharField(
        max_length=200, required=False, help_text="Empty: named after the input."
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields = self.fields
        cast(forms.ModelChoiceField, fields["dataset"]).queryset = selectors.datasets_for_ranking(
            user
        )
        cast(forms.ModelChoiceField, fields["campaign"]).queryset = selectors.campaigns_for_ranking(
            user
        )
        cast(forms.ModelChoiceField, fields["version"]).queryset = selectors.versions_for_ranking(
            user
        )
        for name in ("input_kind", "dataset", "campaign", "version"):
            fields[name].widget.attrs.update(_REFRESH)
        options = selectors.source_options(self.chosen_kind, self.chosen_source())
        cast(forms.ChoiceField, fields["language_pair"]).choices = [
            ("", "— the only one —"),
            *options["language_pairs"],
        ]
        cast(forms.ChoiceField, fields["score"]).choices = options["scores"]

    @property
    def chosen_kind(self) -> str:
        value = (self.data.get("input_kind") if self.is_bound else None) or self.initial.get(
            "input_kind", SystemRanking.InputKind.DATASET
        )
        return value if value in SOURCE_FIELD else SystemRanking.InputKind.DATASET

    @property
    def source_field(self) -> str:
        return SOURCE_FIELD[self.chosen_kind]

    def chosen_source(self) -> Any:
        """The source the request names, if the user may rank it (else None)."""
        name = self.source_field
        raw = self.data.get(name) if self.is_bound else self.initial.get(name)
        if not raw or not str(raw).isdigit():
            return None
        field = cast(forms.ModelChoiceField, self.fields[name])
        queryset = field.queryset
        return queryset.filter(pk=int(raw)).first() if queryset is not None else None

    def service_arguments(self) -> dict[str, Any]:
        """The cleaned form as ``start_ranking``'s keyword arguments (only the chosen source)."""
        data = dict(self.cleaned_data)
        for field in ("dataset", "campaign", "version"):
            if field != self.source_field:
                data[field] = None
        return data
