"""Forms of the curation pages. A source's form is built from the fields it declares."""

from __future__ import annotations

from typing import Any

from django import forms

from challenge_sets.models import ChallengeItem
from challenge_sets.policy import MAJORITY_IS_ATTESTED, PROTOCOL_RULES, ValidationPolicy
from challenge_sets.sources import ItemSource
from core.uploads import UploadField

_DEFAULT = ValidationPolicy()


class ChallengeSetForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    language_pairs = forms.CharField(
        required=False, help_text="Comma-separated, e.g. en-cs, en-de (items add their own)."
    )
    licence = forms.CharField(max_length=200, initial="CC-BY-4.0")
    provenance_notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    protocol = forms.ChoiceField(
        choices=[("esa", "ESA"), ("mqm", "MQM"), ("choice", "Choice (lexical)")], initial="esa"
    )
    overlap = forms.IntegerField(
        min_value=1, max_value=20, initial=_DEFAULT.overlap, label="Annotators per item"
    )
    threshold = forms.FloatField(
        min_value=0, max_value=100, initial=_DEFAULT.threshold, label="Difficulty threshold",
        help_text="Accept when human difficulty (100 − mean score) is at least this.",
    )  # fmt: skip
    min_agreement = forms.FloatField(
        min_value=0, max_value=1, initial=_DEFAULT.min_agreement, label="Minimum agreement",
        help_text="Below it (0–1) the proposal is “review”.",
    )  # fmt: skip
    attention_checks = forms.IntegerField(
        min_value=0, max_value=1000, initial=0, label="Generated attention checks",
        help_text="ESA/MQM: corrupted copies of items, judged against the original.",
    )  # fmt: skip
    qc_min_pass_rate = forms.FloatField(
        min_value=0, max_value=1, initial=0.8, label="QC: checks to pass (share)"
    )
    qc_min_seconds_per_item = forms.FloatField(
        min_value=0, initial=3.0, label="QC: minimum seconds per item"
    )

    POLICY_FIELDS = ("protocol", "overlap", "threshold", "min_agreement",
                     "attention_checks", "qc_min_pass_rate", "qc_min_seconds_per_item")  # fmt: skip

    def policy(self) -> dict[str, Any]:
        """The policy's settings; the acceptance rule follows from the protocol."""
        policy = {name: self.cleaned_data[name] for name in self.POLICY_FIELDS}
        return policy | {"rule": PROTOCOL_RULES.get(policy["protocol"], MAJORITY_IS_ATTESTED)}

    def language_pair_list(self) -> list[str]:
        return [p.strip() for p in self.cleaned_data["language_pairs"].split(",") if p.strip()]


class DecideForm(forms.Form):
    status = forms.ChoiceField(
        choices=[(s.value, s.label) for s in ChallengeItem.Status if s != "pending"]
    )
    reason = forms.CharField(max_length=500, required=False)


def source_form(source: ItemSource, data=None, files=None) -> forms.Form:
    """A form with the source's declared fields (names as the API takes them)."""
    form = forms.Form(data, files, prefix=source.name)
    for spec in source.fields:
        common = {"label": spec.label, "required": spec.required, "help_text": spec.help,
                  "initial": spec.default}  # fmt: skip
        if spec.kind == "choice":
            field: forms.Field = forms.ChoiceField(choices=source.choices(spec.name), **common)
        elif spec.kind == "int":
            field = forms.IntegerField(min_value=1, **common)
        elif spec.kind == "float":
            field = forms.FloatField(**common)
        elif spec.kind == "file":
            field = UploadField(**common)
        else:
            field = forms.CharField(**common)
        form.fields[spec.name] = field
    return form
