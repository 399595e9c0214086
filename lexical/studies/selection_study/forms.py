"""The form that creates a lexical-selection study from an example selection."""

from __future__ import annotations

from django import forms

from annotation import agreement
from lexical.models import ExampleSelection
from lexical.studies.fields import native_speakers_field, one_study_per_person_field
from lexical.studies.selection_study.services import (
    DEFAULT_CONFIDENCE_LABELS,
    DEFAULT_OVERLAP,
    MAX_ATTENTION_CHECKS,
    StudyParams,
)

TIE_RULE_CHOICES = [
    (agreement.NO_MAJORITY, "No majority: a tie keeps the sentence out of the dataset"),
    (agreement.ATTESTED_WINS, "The attested variation wins a tie it is part of"),
]


class SelectionStudyForm(forms.Form):
    selection = forms.ModelChoiceField(queryset=ExampleSelection.objects.all())
    name = forms.CharField(max_length=200, help_text="The campaign's name; it must be unused.")
    overlap = forms.IntegerField(
        initial=DEFAULT_OVERLAP,
        min_value=1,
        max_value=100,
        label="Annotators per sentence",
        help_text="Seed 004: a majority of 3 native speakers.",
    )
    tie_rule = forms.ChoiceField(choices=TIE_RULE_CHOICES, initial=agreement.NO_MAJORITY)
    confidence_labels = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        initial="\n".join(DEFAULT_CONFIDENCE_LABELS),
        max_length=3000,
        help_text="One per line, least to most confident (seed 004 Fig. 4 wording by default).",
    )
    attention_checks = forms.IntegerField(
        initial=0,
        min_value=0,
        max_value=MAX_ATTENTION_CHECKS,
        help_text="Instructed-response items: the question names the option to pick.",
    )
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=5000,
        help_text="Empty: seed 004 Fig. 4's instructions.",
    )
    native_speakers = native_speakers_field()
    one_study_per_person = one_study_per_person_field("the language's rule-validation study")

    def clean_confidence_labels(self) -> tuple[str, ...]:
        lines = [line.strip() for line in self.cleaned_data["confidence_labels"].splitlines()]
        return tuple(line for line in lines if line)

    def params(self) -> StudyParams:
        data = self.cleaned_data
        return StudyParams(
            name=data["name"],
            overlap=data["overlap"],
            tie_rule=data["tie_rule"],
            confidence_labels=data["confidence_labels"],
            attention_checks=data["attention_checks"],
            instructions=data["instructions"],
            native_speakers=data["native_speakers"],
            one_study_per_person=data["one_study_per_person"],
        )
