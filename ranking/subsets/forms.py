"""The new-analysis form: parse the request; ``services.start_analysis`` checks the subject.

The subject comes preset from the page that links here (a version, a DEC evaluation and its
estimator, a comparison); the form shows only that kind's fields. The estimators offered are
the chosen evaluation's (and the human-score oracle): without JavaScript a GET button shows the
options of a newly chosen evaluation.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

from django import forms

from ranking.discrimination import DEFAULT_FRACTIONS
from ranking.subsets import inputs, selectors
from ranking.subsets.models import DiscriminationAnalysis
from ranking.subsets.services import MAX_RANDOM, MAX_RESAMPLES, MAX_SEED

Kind = DiscriminationAnalysis.SubjectKind
SUBJECT_FIELDS = {
    Kind.VERSION: ("version",),
    Kind.HARDEST: ("evaluation", "dataset", "estimator"),
    Kind.BREAKER: ("comparison", "score"),
}
MAX_FRACTIONS_TEXT = 200


class _VersionChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.challenge_set.name} v{obj.number} ({obj.n_items} items)"


class _EvaluationChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"#{obj.pk} on {obj.dataset.name}: {', '.join(obj.estimators)}"


def parse_percentages(text: str) -> list[float]:
    """ "5 10 25" or "5, 10, 25" (percent) -> [0.05, 0.1, 0.25]; a ValidationError names the
    value at fault."""
    if len(text) > MAX_FRACTIONS_TEXT:
        raise forms.ValidationError(f"at most {MAX_FRACTIONS_TEXT} characters")
    values = []
    for part in [p for p in re.split(r"[\s,;]+", text.strip()) if p]:
        try:
            number = float(part.removesuffix("%"))
        except ValueError:
            raise forms.ValidationError(f"{part!r} is not a number") from None
        if not math.isfinite(number) or not 0 < number <= 100:
            raise forms.ValidationError(f"{part!r} is not a percentage above 0 and at most 100")
        values.append(round(number / 100, 6))
    if not values:
        raise forms.ValidationError("give at least one subset size")
    return values


class AnalysisForm(forms.Form):
    subject_kind = forms.ChoiceField(choices=Kind.choices, widget=forms.HiddenInput)
    version = _VersionChoice(queryset=None, required=False, empty_label="— choose —")
    evaluation = _EvaluationChoice(
        queryset=None, required=False, empty_label="— none: the human-score oracle only —",
        label="DEC evaluation",
    )  # fmt: skip
    dataset: forms.ModelChoiceField = forms.ModelChoiceField(
        queryset=None, required=False, empty_label="— the evaluation's —",
        label="Difficulty dataset",
    )  # fmt: skip
    estimator = forms.ChoiceField(label="Hardest by", required=False, choices=[])
    comparison = forms.ChoiceField(label="MT-breaker comparison", required=False, choices=[])
    score = forms.ChoiceField(
        label="Scores", required=False,
        choices=[(inputs.QE, "QE quality of the targets' and transfers' translations"),
                 (inputs.HUMAN, "people's scores of the selected steps")],
    )  # fmt: skip
    language_pair = forms.CharField(
        label="Language pair", max_length=40, required=False,
        help_text="Empty: the subject's only one (a comparison: its target language, e.g. cs).",
    )  # fmt: skip
    test = forms.ChoiceField(choices=DiscriminationAnalysis.Test.choices, initial="permutation")
    n_resamples = forms.IntegerField(
        label="Resamples", initial=1000, min_value=1, max_value=MAX_RESAMPLES,
        help_text="Permutation and bootstrap tests only.",
    )  # fmt: skip
    n_random = forms.IntegerField(
        label="Random subsets per size", initial=20, min_value=2, max_value=MAX_RANDOM
    )
    alpha = forms.FloatField(label="α", initial=0.05, min_value=0.0001, max_value=0.5)
    seed = forms.IntegerField(initial=0, min_value=0, max_value=MAX_SEED)
    fractions = forms.CharField(
        label="Subset sizes (% of segments)", required=False, max_length=MAX_FRACTIONS_TEXT,
        initial=" ".join(f"{100 * f:g}" for f in DEFAULT_FRACTIONS),
        help_text="A dataset's hardest segments only; a version or a method is its own size.",
    )  # fmt: skip
    name = forms.CharField(max_length=200, required=False, help_text="Empty: named after it.")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields = self.fields
        cast(forms.ModelChoiceField, fields["version"]).queryset = selectors.versions_for(user)
        cast(forms.ModelChoiceField, fields["evaluation"]).queryset = selectors.evaluations_for(
            user
        )
        cast(forms.ModelChoiceField, fields["dataset"]).queryset = selectors.datasets_for(user)
        names = selectors.comparison_names_for(user)
        cast(forms.ChoiceField, fields["comparison"]).choices = [(n, n) for n in names]
        evaluation = self._chosen("evaluation")
        estimators = [inputs.ORACLE, *(evaluation.estimators if evaluation else [])]
        cast(forms.ChoiceField, fields["estimator"]).choices = [
            (e, "the human-score oracle (mean human score)" if e == inputs.ORACLE else e)
            for e in estimators
        ]

    def _value(self, name: str) -> Any:
        return (self.data.get(name) if self.is_bound else None) or self.initial.get(name)

    def _chosen(self, name: str) -> Any:
        raw = self._value(name)
        if not raw or not str(raw).isdigit():
            return None
        queryset = cast(forms.ModelChoiceField, self.fields[name]).queryset
        return queryset.filter(pk=int(raw)).first() if queryset is not None else None

    @property
    def chosen_kind(self) -> str:
        value = self._value("subject_kind")
        return value if value in Kind.values else ""

    def clean_fractions(self) -> list[float] | None:
        text = self.cleaned_data.get("fractions") or ""
        return parse_percentages(text) if text.strip() else None

    def service_arguments(self) -> dict[str, Any]:
        """The cleaned form as ``start_analysis``'s keyword arguments (only the kind's subject)."""
        data = dict(self.cleaned_data)
        kind = data["subject_kind"]
        for subject_field in ("version", "evaluation", "dataset", "estimator", "comparison"):
            if subject_field not in SUBJECT_FIELDS[kind]:
                data[subject_field] = (
                    None if subject_field not in ("estimator", "comparison") else ""
                )
        if kind != Kind.BREAKER:
            data["score"] = ""
        return data
