"""The new rule job form. Django fields check types; what can run (engines, the concept source,
parameters) is checked by ``lexical.rules.services.start_rule_jobs`` — the same code the API
and ``generate_rules`` use — and its errors are put back next to the fields here."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from engines.models import Engine
from lexical.models import ExampleSelection, MiningJob, RuleJob
from lexical.models.rules import DEFAULT_RULE_PARAMS

__all__ = ["RuleJobForm", "chat_engine_choices"]


def chat_engine_choices() -> list[tuple[str, str]]:
    engines = Engine.objects.filter(enabled=True).order_by("name")
    return [
        (e.name, f"{e.name} ({e.get_kind_display()})") for e in engines if e.has_capability("chat")
    ]


class RuleJobForm(forms.Form):
    source = forms.ChoiceField(
        choices=RuleJob.Source.choices, widget=forms.RadioSelect, label="Concepts"
    )
    mining_job = forms.TypedChoiceField(coerce=int, required=False, label="Mining job")
    selection = forms.TypedChoiceField(coerce=int, required=False, label="Example selection")
    concepts = forms.CharField(
        required=False,
        max_length=20_000,
        label="Concept ids",
        help_text="Separated by commas or spaces.",
    )
    engines = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        label="Generator engines",
        help_text="One job per engine; their rules are shown side by side per concept.",
    )
    sentences_per_variation = forms.IntegerField(
        initial=DEFAULT_RULE_PARAMS["sentences_per_variation"], label="Sentences per variation"
    )
    max_sentence_tokens = forms.IntegerField(
        initial=DEFAULT_RULE_PARAMS["max_sentence_tokens"],
        label="Sentences shorter than (tokens)",
    )
    max_reasks = forms.IntegerField(initial=DEFAULT_RULE_PARAMS["max_reasks"], label="Re-asks")
    system_prompt_in_user = forms.BooleanField(
        required=False,
        label="The model takes no system prompt (Gemma): put it in the user message",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        jobs = MiningJob.objects.select_related("corpus").order_by("-pk")[:200]
        selections = ExampleSelection.objects.order_by("-pk")[:200]
        cast(forms.ChoiceField, self.fields["mining_job"]).choices = [("", "—")] + [
            (j.pk, str(j)) for j in jobs
        ]
        cast(forms.ChoiceField, self.fields["selection"]).choices = [("", "—")] + [
            (s.pk, str(s)) for s in selections
        ]
        cast(forms.ChoiceField, self.fields["engines"]).choices = chat_engine_choices()

    def clean_concepts(self) -> list[int] | None:
        text = self.cleaned_data.get("concepts", "")
        parts = text.replace(",", " ").split()
        if not parts:
            return None
        if not all(p.isdigit() and len(p) < 12 for p in parts):
            raise forms.ValidationError("Give concept ids (whole numbers).")
        return [int(p) for p in parts]

    def to_config(self) -> dict[str, Any]:
        data = self.cleaned_data
        config: dict[str, Any] = {
            "engines": data["engines"],
            "params": {
                key: data[key]
                for key in (
                    "sentences_per_variation",
                    "max_sentence_tokens",
                    "max_reasks",
                    "system_prompt_in_user",
                )
            },
        }
        source = data["source"]
        value = data.get(source)
        # An empty choice of the chosen source is sent as is, so the service names the field.
        config[source] = value if value not in ("", None) else []
        return config

    def add_config_errors(self, errors: dict[str, Any]) -> None:
        for field, message in errors.items():
            target = {"source": "source", "params": None, "config": None}.get(field, field)
            if target in self.fields:
                self.add_error(target, str(message))
            else:
                self.add_error(None, f"{field}: {message}")
