"""The engine form: per-kind validation lives on the model (``Engine.clean``)."""

from __future__ import annotations

from django import forms

from engines.kinds import CAPABILITIES
from engines.models import Engine


class EngineForm(forms.ModelForm):
    capabilities = forms.MultipleChoiceField(
        choices=[(c, c) for c in CAPABILITIES], widget=forms.CheckboxSelectMultiple
    )
    base_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1",
    )
    params = forms.JSONField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text="A JSON object; the accepted keys depend on the kind (see below).",
    )

    class Meta:
        model = Engine
        fields = [
            "name",
            "kind",
            "capabilities",
            "description",
            "model",
            "base_url",
            "api_key_env",
            "params",
            "price_in_per_1k",
            "price_out_per_1k",
            "max_concurrency",
            "timeout_s",
            "max_retries",
            "enabled",
        ]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def clean_params(self):
        value = self.cleaned_data.get("params")
        return {} if value is None else value
