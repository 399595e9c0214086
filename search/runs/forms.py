"""The new-run form: parses what the admin typed into a run configuration.

Django fields check types; everything about what can run (engines, trees, budgets, parameters)
is checked by ``search.runs.config.validate_config``, the same code the API and ``run_search``
use, and its errors are put back next to the fields here.
"""

from __future__ import annotations

import json
from typing import Any, cast

from django import forms

from engines.kinds import KIND_LABELS
from engines.models import Engine
from formats import strict_json
from search.bandit import DEFAULT_RICH_BUDGET, DEFAULT_SWITCH, POLICIES, default_choice
from search.models import SearchRun, TopicTree
from search.runs.config import HUMAN_DEFAULTS

__all__ = ["RunForm", "default_algorithm_help"]


def _choice_field(form: forms.BaseForm, name: str) -> forms.ChoiceField:
    """``form.fields[name]``, a choice field (``BaseForm.fields`` is typed as plain fields)."""
    return cast(forms.ChoiceField, form.fields[name])


# Form fields of the human settings: the config's keys prefixed, so they sit in one form.
HUMAN_FIELDS = {f"human_{key}": key for key in HUMAN_DEFAULTS}


def default_algorithm_help() -> str:
    small, _ = default_choice(DEFAULT_SWITCH - 1)
    large, _ = default_choice(DEFAULT_SWITCH)
    return (
        f"“default” picks by the number of topics and the budget: {small} below "
        f"{DEFAULT_SWITCH:,} topics or with {DEFAULT_RICH_BUDGET:g}+ pulls per topic, "
        f"{large} otherwise (docs/adr/0002, 0028). A run keeps the method it was created with."
    )


def _tree_choices() -> list[tuple[str, str]]:
    trees = TopicTree.objects.filter(status=TopicTree.Status.READY, n_leaves__gt=0).order_by("name")
    return [("", "— none (synthetic sampler) —")] + [
        (str(tree.pk), f"{tree.name} ({tree.n_leaves:,} leaf topics)") for tree in trees
    ]


def _engine_label(engine: Engine) -> str:
    if engine.is_synthetic:
        topics = engine.params.get("n_topics")
        return f"{engine.name} — synthetic world, {topics:,} topics, no real texts"
    return f"{engine.name}" + (f" ({engine.model})" if engine.model else "")


def _difficulty_engine_choices() -> list:
    """Enabled difficulty engines grouped by kind, synthetic worlds last and labelled so."""
    engines = Engine.objects.filter(enabled=True).order_by("name")
    groups: dict[str, list[tuple[str, str]]] = {}
    for engine in engines:
        if engine.has_capability("difficulty"):
            groups.setdefault(engine.kind, []).append((engine.name, _engine_label(engine)))
    kinds = sorted(groups, key=lambda kind: (kind == Engine.Kind.SYNTHETIC, KIND_LABELS[kind]))
    return [("", "— choose —")] + [(KIND_LABELS[kind], groups[kind]) for kind in kinds]


def _chat_engine_choices() -> list[tuple[str, str]]:
    engines = Engine.objects.filter(enabled=True).order_by("name")
    return [("", "— none —")] + [
        (engine.name, _engine_label(engine)) for engine in engines if engine.has_capability("chat")
    ]


class RunForm(forms.Form):
    name = forms.CharField(max_length=200)
    tree = forms.ChoiceField(label="Topic tree", required=False)
    sampler = forms.ChoiceField(
        choices=SearchRun.Sampler.choices,
        initial=SearchRun.Sampler.CORPUS,
        help_text="Where texts come from: the tree's imported corpus, a chat engine drawing "
        "texts on demand, or a synthetic world (no tree; goes with a synthetic engine).",
    )
    sampler_engine = forms.ChoiceField(
        label="Sampler engine", required=False, help_text="The chat engine of the llm sampler."
    )
    difficulty_engine = forms.ChoiceField(
        help_text="An artificial crowd (translators × QE) is what humans can score; heuristics "
        "and LLM judges estimate difficulty from the source alone."
    )
    src_lang = forms.CharField(label="Source language", max_length=16, initial="en")
    tgt_lang = forms.CharField(
        label="Target language",
        max_length=16,
        required=False,
        help_text="Needed by translators and by human modes.",
    )
    algorithm = forms.ChoiceField(initial="default")
    params = forms.CharField(
        label="Algorithm parameters (JSON object)",
        required=False,
        initial="{}",
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text='e.g. {"epsilon": 0.1} for epsilon_greedy; {} keeps the method\'s defaults.',
    )
    budget_pulls = forms.IntegerField(
        label="Budget (pulls)",
        required=False,
        min_value=1,
        initial=3000,
        help_text="Texts drawn and scored in all. Leave empty with a money budget to plan for "
        "three pulls per topic.",
    )
    budget_money = forms.DecimalField(
        label="Budget (money, $)",
        required=False,
        min_value=0,
        decimal_places=4,
        help_text="Optional: the run stops at the first round boundary past it.",
    )
    k = forms.IntegerField(
        label="k (topics to find)", initial=10, min_value=1, help_text="The size of the top-k."
    )
    seed = forms.IntegerField(initial=0, min_value=0)
    batch_size = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="Pulls per round (one worker task each). Leave empty to follow the run: "
        "1 % of the budget (at least 10, at most 2,000, never above the budget), and with "
        "remote engines at most 8 requests per slot of the slowest one's concurrency limit, "
        "in multiples of that limit.",
    )
    human_mode = forms.ChoiceField(
        choices=SearchRun.HumanMode.choices,
        initial=SearchRun.HumanMode.OFF,
        help_text="replace: human difficulty replaces the automatic one of judged texts; "
        "calibrate: a monotone map fitted on judged texts adjusts every automatic estimate.",
    )
    human_rule = forms.ChoiceField(
        label="Which texts go to humans",
        choices=[
            ("top_k", "texts of the current top-k topics"),
            ("fraction", "a share of each round"),
            ("boundary", "texts whose check could change the top-k"),
        ],
        initial=HUMAN_DEFAULTS["rule"],
    )
    human_per_topic = forms.IntegerField(
        label="Texts per top topic", min_value=1, initial=HUMAN_DEFAULTS["per_topic"]
    )
    human_fraction = forms.FloatField(
        label="Share of each round", min_value=0, max_value=1, initial=HUMAN_DEFAULTS["fraction"]
    )
    human_max_items = forms.IntegerField(
        label="Texts sent at most", min_value=0, initial=HUMAN_DEFAULTS["max_items"]
    )
    human_overlap = forms.IntegerField(
        label="Annotators per text", min_value=1, initial=HUMAN_DEFAULTS["overlap"]
    )
    human_timeout_hours = forms.FloatField(
        label="Wait for humans (hours)",
        min_value=0,
        initial=HUMAN_DEFAULTS["timeout_hours"],
        help_text="How long a run whose budget is spent waits for outstanding human scores.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _choice_field(self, "tree").choices = _tree_choices()
        _choice_field(self, "sampler_engine").choices = _chat_engine_choices()
        _choice_field(self, "difficulty_engine").choices = _difficulty_engine_choices()
        _choice_field(self, "algorithm").choices = [("default", "default (recommended)")] + [
            (name, name) for name in sorted(POLICIES)
        ]
        self.fields["algorithm"].help_text = default_algorithm_help()

    def clean_params(self) -> dict:
        text = (self.cleaned_data.get("params") or "").strip() or "{}"
        try:
            params = strict_json.loads(text)
        except strict_json.JSONSyntaxError as exc:
            raise forms.ValidationError(f"not valid JSON: {exc.msg} (line {exc.lineno})") from None
        except strict_json.JSONInputError as exc:
            raise forms.ValidationError(f"not valid JSON: {exc}") from None
        if not isinstance(params, dict):
            raise forms.ValidationError("must be a JSON object, e.g. {}")
        return params

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if data.get("sampler") == SearchRun.Sampler.LLM and not data.get("sampler_engine"):
            self.add_error("sampler_engine", "Choose the chat engine that draws the texts.")
        return data

    def to_config(self) -> dict[str, Any]:
        """The run configuration ``validate_config`` reads (see search/run_config.py)."""
        data = self.cleaned_data
        config = {
            key: data[key]
            for key in (
                "name", "tree", "sampler", "sampler_engine", "difficulty_engine", "src_lang",
                "tgt_lang", "algorithm", "params", "budget_pulls", "budget_money", "k", "seed",
                "batch_size", "human_mode",
            )
        }  # fmt: skip
        config["human_settings"] = {key: data[field] for field, key in HUMAN_FIELDS.items()}
        return config

    def add_config_errors(self, errors: dict[str, str]) -> None:
        """Put ``RunConfigError.errors`` next to the fields they name."""
        for key, message in errors.items():
            if key == "human_settings":
                self.add_error(None, f"Human settings: {message}")
            elif key in self.fields:
                self.add_error(key, message)
            else:
                self.add_error(None, message)

    @classmethod
    def initial_from(cls, run: SearchRun) -> dict[str, Any]:
        """Initial values that repeat ``run`` ("duplicate as new run")."""
        initial = {
            "name": f"{run.name} (copy)"[:200],
            "tree": str(run.tree_id or ""),
            "sampler": run.sampler,
            "sampler_engine": run.sampler_engine.name if run.sampler_engine is not None else "",
            "difficulty_engine": run.difficulty_engine.name,
            "src_lang": run.src_lang,
            "tgt_lang": run.tgt_lang,
            "algorithm": run.algorithm,
            "params": json.dumps(run.params, ensure_ascii=False),
            "budget_pulls": run.budget_pulls,
            "budget_money": run.budget_money,
            "k": run.k,
            "seed": run.seed,
            "batch_size": run.batch_size,
            "human_mode": run.human_mode,
        }
        settings = {**HUMAN_DEFAULTS, **run.human_settings}
        initial.update({field: settings[key] for field, key in HUMAN_FIELDS.items()})
        return initial
