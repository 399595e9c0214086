"""The new-replay form: parse the request; ``services.start_replay`` checks the dataset pair."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from ranking import allocation
from ranking.replays import selectors
from ranking.replays.models import ReplayRun
from ranking.replays.services import DEFAULT_POLICIES, LIMITS

POLICY_LABELS = {
    "uniform": "uniform: random cells, balanced over systems",
    "uniform_segments": "uniform segments: whole segments in random order (WMT's design)",
    "pearmut": "Pearmut: systems drawn by 1 / (rank + 1) after a warm-up",
    "settle": "settle (ours): the unresolved pairs the goal needs, cheapest first",
}


def _bounded(label: str, field: str, initial: int, help_text: str = "") -> forms.IntegerField:
    low, high = LIMITS[field]
    return forms.IntegerField(label=label, initial=initial, min_value=low, max_value=high,
                              help_text=help_text)  # fmt: skip


class ReplayForm(forms.Form):
    dataset: forms.ModelChoiceField = forms.ModelChoiceField(
        queryset=None, label="Difficulty dataset", empty_label="— choose —"
    )
    language_pair = forms.CharField(
        label="Language pair", max_length=40, required=False,
        help_text="Empty: the dataset's only one.",
    )  # fmt: skip
    score = forms.CharField(
        label="Score", max_length=200, required=False,
        help_text="Empty: the human score, one a cell. raw or z: each judgment reveals one "
        "rater's score.",
    )  # fmt: skip
    policies = forms.MultipleChoiceField(
        choices=[(p, POLICY_LABELS.get(p, p)) for p in allocation.POLICIES],
        initial=list(DEFAULT_POLICIES), widget=forms.CheckboxSelectMultiple,
    )  # fmt: skip
    goal = forms.ChoiceField(
        choices=ReplayRun.Goal.choices, initial=ReplayRun.Goal.TOP,
        help_text="What settle aims at and the stopping rule checks.",
    )  # fmt: skip
    n_seeds = _bounded("Seeds", "n_seeds", 20, "Each seed replays every policy once.")
    n_checkpoints = _bounded("Checkpoints", "n_checkpoints", 40)
    batch_size = _bounded("Batch", "batch_size", 15, "Cells judged at once between decisions.")
    n_resamples = _bounded("Resamples", "n_resamples", 200, "The stopping rule's test, per check.")
    alpha = forms.FloatField(label="α", initial=0.05, min_value=0.0001, max_value=0.5)
    tau_threshold = forms.FloatField(label="τ threshold", initial=0.9, min_value=0.01,
                                     max_value=0.99)  # fmt: skip
    name = forms.CharField(max_length=200, required=False, help_text="Empty: named after it.")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast(forms.ModelChoiceField, self.fields["dataset"])
        field.queryset = selectors.datasets_for_replay(user)

    def service_arguments(self) -> dict[str, Any]:
        """The cleaned form as ``start_replay``'s keyword arguments."""
        return dict(self.cleaned_data)

    def replay_fields(self) -> list[forms.BoundField]:
        """The replay's settings, shown side by side."""
        names = ("n_seeds", "n_checkpoints", "batch_size", "n_resamples", "alpha", "tau_threshold")
        return [self[name] for name in names]
