"""Engine records, the response cache, the cost ledger and replay data."""

from __future__ import annotations

import json
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from engines.keys import key_variable_problem
from engines.kinds import (
    KIND_CAPABILITIES,
    KIND_LABELS,
    LOCAL_MODEL_KINDS,
    REMOTE_KINDS,
    ParamsError,
    validate_params,
)
from engines.local_models.loading import model_dir_problems

NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$",
    "Use letters, digits, '.', '_' and '-' only, starting with a letter or digit.",
)
ENV_NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]*$",
    "The name of an environment variable (letters, digits and '_'), not the key itself.",
)
MAX_CONCURRENCY = 256
RESERVED_NAMES = {"new"}  # "/engines/new/" is the create page


class Engine(models.Model):
    """A configured connector: which kind, which model where, at what price and parallelism.

    The API key is never stored: ``api_key_env`` names the environment variable that holds it,
    read at call time by the process that makes the call.
    """

    class Kind(models.TextChoices):
        OPENAI_CHAT = "openai_chat", KIND_LABELS["openai_chat"]
        HEURISTIC = "heuristic", KIND_LABELS["heuristic"]
        REPLAY = "replay", KIND_LABELS["replay"]
        SYNTHETIC = "synthetic", KIND_LABELS["synthetic"]
        ARTIFICIAL_CROWD = "artificial_crowd", KIND_LABELS["artificial_crowd"]
        BREAKER_EDITOR = "breaker_editor", KIND_LABELS["breaker_editor"]
        FRAGILE_MT = "fragile_mt", KIND_LABELS["fragile_mt"]
        FRAGILE_QE = "fragile_qe", KIND_LABELS["fragile_qe"]
        OPENAI_EMBEDDINGS = "openai_embeddings", KIND_LABELS["openai_embeddings"]
        HASHED_EMBEDDINGS = "hashed_embeddings", KIND_LABELS["hashed_embeddings"]
        LEXICAL_WORLD = "lexical_world", KIND_LABELS["lexical_world"]
        LOCAL_TRANSLATOR = "local_translator", KIND_LABELS["local_translator"]
        LOCAL_QE = "local_qe", KIND_LABELS["local_qe"]
        LOCAL_DIFFICULTY = "local_difficulty", KIND_LABELS["local_difficulty"]
        LOCAL_EMBEDDINGS = "local_embeddings", KIND_LABELS["local_embeddings"]

    name = models.CharField(max_length=100, unique=True, validators=[NAME_VALIDATOR])
    kind = models.CharField(max_length=32, choices=Kind.choices)
    capabilities = models.JSONField(
        default=list,
        help_text="Any of chat, translate, quality, difficulty, embed the kind supports.",
    )
    description = models.TextField(blank=True)
    model = models.CharField(max_length=200, blank=True, help_text="Model id sent to the API.")
    base_url = models.URLField(
        max_length=500, blank=True, help_text="e.g. https://api.openai.com/v1"
    )
    params = models.JSONField(default=dict, blank=True)
    price_in_per_1k = models.DecimalField(
        max_digits=12, decimal_places=6, default=Decimal(0), validators=[MinValueValidator(0)]
    )
    price_out_per_1k = models.DecimalField(
        max_digits=12, decimal_places=6, default=Decimal(0), validators=[MinValueValidator(0)]
    )
    max_concurrency = models.PositiveIntegerField(
        default=4, validators=[MinValueValidator(1), MaxValueValidator(MAX_CONCURRENCY)]
    )
    timeout_s = models.FloatField(
        default=60.0, validators=[MinValueValidator(0.1), MaxValueValidator(600)]
    )
    max_retries = models.PositiveSmallIntegerField(
        default=4, validators=[MaxValueValidator(10)], help_text="Retries after transient errors."
    )
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[ENV_NAME_VALIDATOR],
        help_text="Name of the environment variable holding the API key (never the key).",
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_remote(self) -> bool:
        return self.kind in REMOTE_KINDS

    @property
    def is_local_model(self) -> bool:
        return self.kind in LOCAL_MODEL_KINDS

    @property
    def is_synthetic(self) -> bool:
        return self.kind == self.Kind.SYNTHETIC

    @property
    def params_json(self) -> str:
        return json.dumps(self.params, indent=2, ensure_ascii=False, sort_keys=True)

    def has_capability(self, capability: str) -> bool:
        return capability in (self.capabilities or [])

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        if self.name in RESERVED_NAMES:
            errors["name"] = [f"{self.name!r} is reserved by the engine pages; choose another."]
        supported = KIND_CAPABILITIES.get(self.kind, ())
        caps = self.capabilities
        if not isinstance(caps, list) or not caps or not all(isinstance(c, str) for c in caps):
            errors["capabilities"] = ["Choose at least one capability."]
        else:
            unsupported = [c for c in caps if c not in supported]
            if unsupported:
                errors["capabilities"] = [
                    f"Kind {self.kind} cannot serve {', '.join(unsupported)} "
                    f"(it supports {', '.join(supported)})."
                ]
            elif len(set(caps)) != len(caps):
                errors["capabilities"] = ["A capability is listed twice."]
        if self.kind in KIND_CAPABILITIES:
            try:
                validate_params(self.kind, self.params)
            except ParamsError as exc:
                errors["params"] = exc.messages
        if self.kind == self.Kind.ARTIFICIAL_CROWD and "params" not in errors:
            problems = self._crowd_reference_problems()
            if problems:
                errors["params"] = problems
        check_model = getattr(settings, "LOCAL_MODELS_CHECK_ON_SAVE", True)
        if self.kind in LOCAL_MODEL_KINDS and "params" not in errors and check_model:
            # At creation, not at first call: a missing extra or an unreadable directory is
            # reported by the form, the API and the importer alike. A site whose web servers do
            # not hold the weights (only its local_models workers do) turns this off.
            problems = model_dir_problems(self.kind, self.params)
            if problems:
                errors["params"] = problems
        key_problem = key_variable_problem(self.api_key_env)
        if key_problem:
            errors["api_key_env"] = [key_problem]
        if self.kind in (self.Kind.OPENAI_CHAT, self.Kind.OPENAI_EMBEDDINGS):
            if not self.model:
                errors["model"] = ["An OpenAI-compatible engine needs a model id."]
            if not self.base_url:
                errors["base_url"] = ["An OpenAI-compatible engine needs a base URL."]
        if errors:
            raise ValidationError(errors)

    def _crowd_reference_problems(self) -> list[str]:
        problems = []
        wanted = [(n, "translate") for n in self.params["translators"]] + [
            (n, "quality") for n in self.params["quality_estimators"]
        ]
        found = {e.name: e for e in Engine.objects.filter(name__in={n for n, _ in wanted})}
        for name, capability in wanted:
            other = found.get(name)
            if name == self.name:
                problems.append(f"{name}: a crowd cannot contain itself")
            elif other is None:
                problems.append(f"{name}: there is no engine with that name")
            elif not other.has_capability(capability):
                role = "translator" if capability == "translate" else "quality estimator"
                problems.append(f"{name}: that engine is not configured as a {role}")
        return problems


class CachedResponse(models.Model):
    """A successful remote answer, keyed by a hash of everything that determines it.

    The key covers kind, base URL, model, request parameters, prompt version and input (not the
    engine's name, price or limits), so renaming an engine or changing its price keeps its cache
    and a run can be replayed offline.
    """

    key = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=32)
    model = models.CharField(max_length=200, blank=True)
    operation = models.CharField(max_length=32)
    prompt_version = models.CharField(max_length=50, blank=True)
    response_text = models.TextField()
    value = models.JSONField(null=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.operation} {self.key[:12]}"


class EngineCall(models.Model):
    """One row of the cost ledger: one remote request (with its retries), one batch of cache
    hits, or one batch answered locally."""

    class Operation(models.TextChoices):
        COMPLETE = "complete", "chat completion"
        TRANSLATE = "translate", "translation"
        SCORE = "score", "quality estimation"
        ESTIMATE = "estimate", "difficulty estimation"
        EMBED = "embed", "embedding"

    engine = models.ForeignKey(Engine, on_delete=models.PROTECT, related_name="calls")
    scope = models.CharField(max_length=200, blank=True)
    operation = models.CharField(max_length=16, choices=Operation.choices)
    items = models.PositiveIntegerField(default=1)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=16, decimal_places=8, default=Decimal(0))
    latency_ms = models.FloatField(default=0.0)
    cache_hit = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=1)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # cost_by_scope(scope): the totals of one search run / evaluation.
            models.Index(fields=["scope", "engine"], name="engines_call_scope_idx"),
            # The engine detail page: recent calls of one engine, newest first.
            models.Index(fields=["engine", "-created_at"], name="engines_call_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.engine_id} {self.operation} ×{self.items}"


class ReplayEntry(models.Model):
    """A translation and/or score that arrived with an imported dataset (kind ``replay``)."""

    engine = models.ForeignKey(Engine, on_delete=models.CASCADE, related_name="replay_entries")
    src_lang = models.CharField(max_length=20)
    tgt_lang = models.CharField(max_length=20)
    source_hash = models.CharField(max_length=64)
    source = models.TextField()
    system = models.CharField(max_length=200, blank=True)
    translation = models.TextField(blank=True)
    score = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # Lookup of translate/score/estimate: (engine, langs, source) [, system].
            models.UniqueConstraint(
                fields=["engine", "src_lang", "tgt_lang", "source_hash", "system"],
                name="engines_replay_unique_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.engine_id} {self.src_lang}-{self.tgt_lang} {self.system or '-'}"


class LocalModelLoad(models.Model):
    """One load of a local model by one process: what the engine page shows (device, size,
    load time). Written by the process that loaded it, usually a ``local_models`` worker."""

    engine = models.ForeignKey(Engine, on_delete=models.CASCADE, related_name="model_loads")
    device = models.CharField(max_length=20)
    dtype = models.CharField(max_length=20)
    family = models.CharField(max_length=20, blank=True)
    parameters = models.BigIntegerField()
    bytes_on_disk = models.BigIntegerField(null=True)
    load_ms = models.FloatField()
    hostname = models.CharField(max_length=200, blank=True)
    pid = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The engine page: the latest loads of one engine.
            models.Index(fields=["engine", "-created_at"], name="engines_load_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.engine_id} on {self.device} in {self.load_ms:.0f} ms"
