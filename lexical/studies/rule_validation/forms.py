"""The new rule-validation study form. Django fields check types; what can be built (concepts,
rules, the campaign name) is checked by ``lexical.studies.rule_validation.services.create_study``
— the same code the API uses — and its errors are put back next to the fields here."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from lexical.models import MiningJob, RuleJob
from lexical.studies.fields import native_speakers_field, one_study_per_person_field
from lexical.studies.rule_validation.services import DEFAULT_ATTENTION_CHECKS, DEFAULT_OVERLAP

__all__ = ["RuleValidationStudyForm"]


class RuleValidationStudyForm(forms.Form):
    name = forms.CharField(max_length=200, label="Campaign name")
    mining_job = forms.TypedChoiceField(
        coerce=int, required=False, label="Concepts of a mining job", empty_value=None
    )
    tgt_lang = forms.CharField(
        max_length=16,
        required=False,
        label="…or every active concept of target language",
        help_text="Used when no mining job is chosen.",
    )
    rule_jobs = forms.TypedMultipleChoiceField(
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        label="Rule jobs (generators)",
        help_text="Every rule they wrote for the chosen concepts is asked about.",
    )
    max_concepts = forms.IntegerField(
        required=False, min_value=1, label="At most this many concepts (sampled)"
    )
    seed = forms.IntegerField(initial=0, min_value=0, label="Seed (sample and order)")
    overlap = forms.IntegerField(
        initial=DEFAULT_OVERLAP, min_value=1, max_value=20, label="Annotators per concept"
    )
    attention_checks = forms.IntegerField(
        initial=DEFAULT_ATTENTION_CHECKS, min_value=0, max_value=50, label="Attention checks"
    )
    native_speakers = native_speakers_field()
    one_study_per_person = one_study_per_person_field("its lexical-selection study")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        jobs = MiningJob.objects.select_related("corpus").order_by("-pk")[:200]
        cast(forms.ChoiceField, self.fields["mining_job"]).choices = [("", "—")] + [
            (j.pk, str(j)) for j in jobs
        ]
        rule_jobs = RuleJob.objects.order_by("-pk")[:200]
        cast(forms.ChoiceField, self.fields["rule_jobs"]).choices = [
            (j.pk, f"{j} — {j.get_status_display()}, {j.items_done}/{j.items_total} concepts")
            for j in rule_jobs
        ]

    def to_config(self) -> dict[str, Any]:
        data = self.cleaned_data
        config = {
            key: data[key]
            for key in (
                "name", "rule_jobs", "max_concepts", "seed", "overlap", "attention_checks",
                "native_speakers", "one_study_per_person",
            )
        }  # fmt: skip
        if data.get("mining_job"):
            config["mining_job"] = data["mining_job"]
        else:
            config["tgt_lang"] = data.get("tgt_lang", "")
        return config

    def add_config_errors(self, errors: dict[str, Any]) -> None:
        for field, message in errors.items():
            if field in self.fields:
                self.add_error(field, str(message))
            else:
                self.add_error(None, f"{field}: {message}")
