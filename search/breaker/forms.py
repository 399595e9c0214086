"""The new breaker run form ("compare methods": one run per ticked method on the same seeds).

Django fields check types; what can run (engines, seeds, settings) is checked by
``search.breaker.config``, the same code the API and ``run_breaker`` use, and its errors are
put back next to the fields here.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms

from core.uploads import UploadField
from difficulty.models import DifficultyDataset
from engines.models import Engine
from search.breaker.methods import METHODS
from search.models import SearchRun, TopicTree

__all__ = ["BreakerForm", "StatisticsForm", "engine_choices"]

SEED_SOURCES = [
    ("topic_tree", "A topic tree's text samples"),
    ("search_run", "A search run's top-k texts"),
    ("dataset", "A difficulty dataset's segments"),
    ("jsonl", "An uploaded JSONL file"),
    ("none", "No seeds (seedless and zero-shot methods only)"),
]


def engine_choices(capability: str) -> list[tuple[str, str]]:
    engines = Engine.objects.filter(enabled=True).order_by("name")
    return [
        (e.name, f"{e.name} ({e.get_kind_display()})")
        for e in engines
        if e.has_capability(capability)
    ]


class BreakerForm(forms.Form):
    name = forms.CharField(max_length=150)
    methods = forms.MultipleChoiceField(
        choices=[(key, spec.label) for key, spec in METHODS.items()],
        widget=forms.CheckboxSelectMultiple,
        initial=["breaker_seeded"],
        help_text="Tick several to compare methods: one run each, on the same seeds.",
    )
    llm = forms.ChoiceField(label="LLM (chat engine)", required=False)
    targets = forms.MultipleChoiceField(
        label="Target translator(s)", help_text="Several make the run Multi (seed 001 §3.3)."
    )
    qe = forms.MultipleChoiceField(label="QE engine(s)", help_text="Averaged, as in the paper.")
    src_lang = forms.CharField(max_length=16, initial="en", label="Source language")
    tgt_lang = forms.CharField(max_length=16, initial="cs", label="Target language")
    seed_source = forms.ChoiceField(choices=SEED_SOURCES, initial="topic_tree", label="Seeds from")
    tree = forms.ChoiceField(required=False, label="Topic tree")
    search_run = forms.ChoiceField(required=False, label="Search run")
    top_k = forms.IntegerField(min_value=1, initial=10, required=False, label="Top-k topics")
    dataset = forms.ChoiceField(required=False, label="Difficulty dataset")
    jsonl = UploadField(
        required=False,
        label="JSONL file",
        help_text='One {"text", "source_url"?, "doc_id"?} a line.',
    )
    n = forms.IntegerField(min_value=1, initial=20, required=False, label="Seeds to sample")
    sample_seed = forms.IntegerField(min_value=0, initial=0, label="Sampling seed")
    n_items = forms.IntegerField(min_value=1, required=False, label="Items (no seeds)")
    target_words = forms.IntegerField(min_value=1, required=False, label="Words (no seeds)")
    n_steps = forms.IntegerField(min_value=1, max_value=100, initial=10, label="Steps N")
    k_generations = forms.IntegerField(min_value=1, max_value=100, initial=10, label="k (min)")
    max_edit_share = forms.IntegerField(
        min_value=1, max_value=100, initial=75, label="Max edit share (%)"
    )
    budget_money = forms.DecimalField(min_value=0, required=False, label="Budget ($)")
    seed = forms.IntegerField(min_value=0, initial=0, label="Seed")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._choices("llm", [("", "— none (Seeds only) —"), *engine_choices("chat")])
        self._choices("targets", engine_choices("translate"))
        self._choices("qe", engine_choices("quality"))
        trees = TopicTree.objects.filter(status=TopicTree.Status.READY).order_by("name")
        self._choices("tree", [(str(t.pk), t.name) for t in trees])
        runs = SearchRun.objects.filter(status=SearchRun.Status.FINISHED).order_by("-pk")[:200]
        self._choices("search_run", [(str(r.pk), f"#{r.pk} {r.name}") for r in runs])
        datasets = DifficultyDataset.objects.order_by("name")
        self._choices("dataset", [(str(d.pk), d.name) for d in datasets])

    def _choices(self, name: str, choices: list[tuple[str, str]]) -> None:
        cast(forms.ChoiceField, self.fields[name]).choices = choices

    def _seeds(self) -> dict | None:
        data = self.cleaned_data
        source = data["seed_source"]
        common = {"n": data.get("n"), "sample_seed": data.get("sample_seed") or 0}
        if source == "topic_tree":
            return {"from": "topic_tree", "tree": data.get("tree"), **common}
        if source == "search_run":
            return {"from": "search_run", "run": int(data.get("search_run") or 0),
                    "top_k": data.get("top_k") or 10, **common}  # fmt: skip
        if source == "dataset":
            return {"from": "dataset", "dataset": data.get("dataset"), **common}
        if source == "jsonl":
            upload = data.get("jsonl")
            lines = upload.read() if upload else b""
            return {"from": "jsonl", "lines": lines, "file": getattr(upload, "name", ""), **common}
        return None

    def to_config(self) -> dict[str, Any]:
        data = self.cleaned_data
        config: dict[str, Any] = {
            "name": data["name"],
            "methods": data["methods"],
            "llm": data.get("llm") or None,
            "targets": data["targets"],
            "qe": data["qe"],
            "src_lang": data["src_lang"],
            "tgt_lang": data["tgt_lang"],
            "n_steps": data["n_steps"],
            "k_generations": data["k_generations"],
            "max_edit_share": data["max_edit_share"] / 100,
            "seed": data["seed"],
        }
        seeds = self._seeds()
        if seeds:
            config["seeds"] = seeds
        for key in ("n_items", "target_words", "budget_money"):
            if data.get(key) not in (None, ""):
                config[key] = float(data[key]) if key == "budget_money" else data[key]
        return config

    def add_config_errors(self, errors: dict[str, Any]) -> None:
        fields = {"llm", "targets", "qe", "tgt_lang", "src_lang", "n_steps", "k_generations",
                  "max_edit_share", "budget_money", "seed", "name", "methods", "n_items",
                  "target_words"}  # fmt: skip
        for field, message in errors.items():
            if field == "seeds":
                self.add_error("seed_source", str(message))
            elif field in fields:
                self.add_error(field, str(message))
            else:
                self.add_error(None, f"{field}: {message}")


class StatisticsForm(forms.Form):
    """Which engines compute a run's data-quality statistics (checked again by the service)."""

    embedder = forms.ChoiceField(help_text="Embeddings for the diversity in embedding space.")
    analyst = forms.ChoiceField(help_text="Chat engine answering the source analysis (App. B).")
    difficulty = forms.ChoiceField(
        required=False, help_text="Optional source-only difficulty estimator."
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["embedder"]).choices = engine_choices("embed")
        cast(forms.ChoiceField, self.fields["analyst"]).choices = engine_choices("chat")
        cast(forms.ChoiceField, self.fields["difficulty"]).choices = [
            ("", "none"),
            *engine_choices("difficulty"),
        ]
