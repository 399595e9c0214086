"""The form that starts an evaluation: a selection, engines × settings, runs and a seed. It
builds the same configuration dictionary as the API and the command (``config.py``)."""

from __future__ import annotations

from typing import Any

from django import forms

from engines.models import Engine
from lexical.evaluation.config import MAX_RUNS
from lexical.models import ExampleSelection

CHAT_SETTINGS = (("none", "no rules"), ("self", "self-generated rules"), ("other", "rules from …"))


def _engines(capability: str) -> list[str]:
    return [
        e.name
        for e in Engine.objects.filter(enabled=True).order_by("name")
        if e.has_capability(capability)
    ]


class EvaluationForm(forms.Form):
    name = forms.CharField(
        max_length=200, required=False, help_text="Optional; named after the selection otherwise."
    )
    selection = forms.ModelChoiceField(
        queryset=ExampleSelection.objects.all(),
        help_text="The examples to evaluate (one language pair).",
    )
    chat = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    generator = forms.ChoiceField(
        required=False,
        label="Rules from another generator",
        help_text="Whose rules the “rules from …” boxes show (the paper: GPT-4's for all).",
    )
    translate = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Translate engines (NMT output matched to a variation)",
    )
    runs = forms.IntegerField(
        min_value=1, max_value=MAX_RUNS, initial=3, help_text="Each with a fresh option order."
    )
    seed = forms.IntegerField(
        required=False,
        min_value=-(2**63) + 1,
        max_value=2**63 - 1,
        help_text="Empty: drawn now and stored.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.chat_engines = _engines("chat")
        chat = self.fields["chat"]
        generator = self.fields["generator"]
        translate = self.fields["translate"]
        assert isinstance(chat, forms.MultipleChoiceField)
        assert isinstance(generator, forms.ChoiceField)
        assert isinstance(translate, forms.MultipleChoiceField)
        chat.choices = [
            (f"{name}:{setting}", f"{name}: {label}")
            for name in self.chat_engines
            for setting, label in CHAT_SETTINGS
        ]
        generator.choices = [("", "—"), *[(n, n) for n in self.chat_engines]]
        translate.choices = [(f"{n}:translate", n) for n in _engines("translate")]

    def grid(self) -> list[tuple[str, list[tuple[str, str, bool]]]]:
        """Rows of the engines × settings table: (engine, [(value, label, checked)])."""
        chosen = set(self["chat"].value() or [])
        return [
            (name, [(f"{name}:{s}", label, f"{name}:{s}" in chosen) for s, label in CHAT_SETTINGS])
            for name in self.chat_engines
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        chat = data.get("chat") or []
        if any(v.endswith(":other") for v in chat) and not data.get("generator"):
            self.add_error("generator", "name the generator whose rules “rules from …” shows")
        if not chat and not data.get("translate"):
            raise forms.ValidationError("tick at least one engine and setting")
        return data

    def to_config(self) -> dict[str, Any]:
        data = self.cleaned_data
        generator = data.get("generator") or ""
        entries = [
            f"{v}:{generator}" if v.endswith(":other") else v for v in data.get("chat") or []
        ]
        config: dict[str, Any] = {
            "name": data.get("name") or "",
            "selection": data["selection"].pk,
            "entries": [*entries, *(data.get("translate") or [])],
            "runs": data["runs"],
        }
        if data.get("seed") is not None:
            config["seed"] = data["seed"]
        return config

    def add_config_errors(self, errors: dict[str, str]) -> None:
        for field, message in errors.items():
            target = {"entries": None, "non_field_errors": None}.get(field, field)
            self.add_error(target if target in self.fields else None, message)
