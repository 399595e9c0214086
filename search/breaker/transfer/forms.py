"""The new transfer form, started from a run page or a comparison page.

Django fields check types; what can run (runs, engines, languages, size) is checked by
``search.breaker.transfer.config`` — the same code the API and ``run_breaker_transfer`` use —
and its errors are put back next to the fields here.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms

from search.breaker.forms import engine_choices
from search.breaker.methods import spec
from search.models import BreakerRun

__all__ = ["TransferForm", "context_runs"]


def context_runs(run_id: str | None, comparison: str | None) -> list[BreakerRun]:
    """The runs a transfer started from a page offers: the comparison's, or the run's and its
    comparison's; without either, the latest finished runs."""
    runs = BreakerRun.objects.order_by("pk")
    if comparison:
        return list(runs.filter(comparison=comparison))
    run = runs.filter(pk=int(run_id)).first() if run_id and run_id.isdigit() else None
    if run is not None and run.comparison:
        return list(runs.filter(comparison=run.comparison))
    if run is not None:
        return [run]
    return list(BreakerRun.objects.filter(status="finished").order_by("-pk")[:200])


def _label(run: BreakerRun) -> str:
    method = spec(run.method).label
    # Runs of a comparison are named "<comparison> · <method>" already.
    return f"#{run.pk} {run.name}" if method in run.name else f"#{run.pk} {run.name} ({method})"


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


class TransferForm(forms.Form):
    name = forms.CharField(max_length=150)
    runs = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        label="Runs (rows)",
        help_text="Their selected texts are translated; runs must be over.",
    )
    translators = forms.MultipleChoiceField(label="Translators (columns)")
    languages = forms.CharField(
        max_length=400,
        label="Target languages (columns)",
        help_text="Codes separated by commas or spaces, e.g. cs, de, zh.",
    )
    qe = forms.MultipleChoiceField(label="QE engine(s)", help_text="Averaged, as in the runs.")
    budget_money = forms.DecimalField(min_value=0, required=False, label="Budget ($)")

    def __init__(self, *args: Any, runs: list[BreakerRun], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(str(r.pk), _label(r)) for r in runs]
        cast(forms.ChoiceField, self.fields["runs"]).choices = choices
        cast(forms.ChoiceField, self.fields["translators"]).choices = engine_choices("translate")
        cast(forms.ChoiceField, self.fields["qe"]).choices = engine_choices("quality")
        finished = [r for r in runs if r.is_finished]
        self.initial.setdefault("runs", [str(r.pk) for r in finished])
        self.initial.setdefault("translators", _unique([t for r in runs for t in r.targets]))
        self.initial.setdefault("qe", _unique([q for r in runs for q in r.qe_engines]))
        self.initial.setdefault("languages", ", ".join(_unique([r.tgt_lang for r in runs])))
        label = runs[0].comparison if runs and runs[0].comparison else "selected runs"
        self.initial.setdefault("name", f"Transfer of {label}"[:150])

    def to_config(self) -> dict[str, Any]:
        data = self.cleaned_data
        config: dict[str, Any] = {
            "name": data["name"],
            "runs": [int(pk) for pk in data["runs"]],
            "translators": data["translators"],
            "languages": data["languages"].replace(",", " ").split(),
            "qe": data["qe"],
        }
        if data.get("budget_money") not in (None, ""):
            config["budget_money"] = str(data["budget_money"])
        return config

    def add_config_errors(self, errors: dict[str, Any]) -> None:
        fields = {"name", "runs", "translators", "languages", "qe", "budget_money"}
        for field, message in errors.items():
            target = "runs" if field == "comparison" else field
            if target in fields:
                self.add_error(target, str(message))
            else:
                self.add_error(None, f"{field}: {message}")
