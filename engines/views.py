"""Engine pages for admins: list, create, edit, detail with totals and a "Test" button."""

from __future__ import annotations

import os

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from core.http import HtmxHttpRequest
from engines import selectors, services
from engines.forms import EngineForm
from engines.kinds import KIND_CAPABILITIES
from engines.models import Engine

PARAM_HELP = {
    "openai_chat": "temperature, top_p, max_tokens, seed, stop, extra_body, "
    "judge_with_target_language (default true), max_parse_attempts (default 3)",
    "heuristic": 'feature: "tokens" | "chars" | "rarity" | "syntax_depth"; spacy_pipeline '
    "(optional, syntax_depth only)",
    "synthetic": "n_topics (required), seed, noise_sd, weights, locs, scales",
    "replay": "system (which system translate replays), systems (which estimate averages)",
    "artificial_crowd": "translators: [engine names], quality_estimators: [engine names]",
    "openai_embeddings": "batch_size (inputs per request, default 64), dimensions, "
    "max_parse_attempts (default 3)",
    "hashed_embeddings": "dim (default 256), ngram ([min, max] characters, default [3, 5])",
    "lexical_world": "SIMULATION: skill (0–1, default 0.5: how often it uses the overlap cue "
    "without rules), rule_words (words per written rule, default 3)",
    "local_translator": "path (required, absolute directory), device (cpu | auto | cuda | "
    "cuda:N | mps; default cpu), dtype (float32 | float16 | bfloat16), batch_size (default 16), "
    "max_length (input tokens, default 512), family (auto | nllb | m2m100 | madlad | marian | "
    'plain), lang_codes ({"en": "eng_Latn"} overrides), num_beams (default 1), '
    "max_new_tokens (default 256); backend (auto | transformers | ctranslate2; auto runs a "
    "directory converted by ct2-transformers-converter with CTranslate2), compute_type "
    "(CTranslate2: int8 | int8_float32 | int16 | float16 | bfloat16 | float32 | auto ...; "
    "default: dtype), tokenizer_path (CTranslate2: a directory with the Hugging Face tokenizer "
    "when the converted one has none)",
    "local_qe": "path, device, dtype, batch_size, max_length as above; output_scale (required: "
    "metricx | unit | percent | sigmoid | linear, with slope and intercept), input_template "
    '(e.g. "source: {source} candidate: {translation}"; default: the pair as a text pair); '
    "format (auto | huggingface | comet: a COMET checkpoint, hparams.yaml + "
    "checkpoints/model.ckpt, e.g. CometKiwi with output_scale unit), encoder_path (COMET: the "
    "encoder's config.json + tokenizer.json; default <path>/encoder)",
    "local_difficulty": "path, device, dtype, batch_size, max_length as above; output_scale "
    "(required, as for local_qe), input_template (with {source})",
    "local_embeddings": "path, device, dtype, batch_size, max_length as above; normalize "
    "(default true)",
}


def _form_context(form: EngineForm, engine: Engine | None) -> dict:
    return {
        "form": form,
        "engine": engine,
        "param_help": [(kind, PARAM_HELP[kind], KIND_CAPABILITIES[kind]) for kind in PARAM_HELP],
    }


@staff_member_required
def engine_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "engines/list.html",
        {"engines": selectors.engines_with_totals(), "totals": selectors.totals_by_engine()},
    )


@staff_member_required
def engine_create(request: HttpRequest) -> HttpResponse:
    form = EngineForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        engine = form.save()
        messages.success(request, f"Engine {engine.name} created.")
        return redirect("engines:detail", name=engine.name)
    return render(request, "engines/form.html", _form_context(form, None))


@staff_member_required
def engine_edit(request: HttpRequest, name: str) -> HttpResponse:
    engine = get_object_or_404(Engine, name=name)
    form = EngineForm(request.POST or None, instance=engine)
    if request.method == "POST" and form.is_valid():
        engine = form.save()
        messages.success(request, f"Engine {engine.name} saved.")
        return redirect("engines:detail", name=engine.name)
    return render(request, "engines/form.html", _form_context(form, engine))


def _detail_context(engine: Engine) -> dict:
    return {
        "engine": engine,
        "totals": selectors.engine_totals(engine),
        "calls": selectors.recent_calls(engine),
        "scopes": selectors.scopes_of_engine(engine),
        # Whether the variable is set, never its value.
        "key_present": bool(engine.api_key_env and os.environ.get(engine.api_key_env)),
        "replay_rows": engine.replay_entries.count() if engine.kind == Engine.Kind.REPLAY else 0,
        "local_model": selectors.local_model_info(engine),
    }


@staff_member_required
def engine_detail(request: HttpRequest, name: str) -> HttpResponse:
    engine = get_object_or_404(Engine, name=name)
    return render(request, "engines/detail.html", _detail_context(engine))


@staff_member_required
@require_POST
def engine_test(request: HtmxHttpRequest, name: str) -> HttpResponse:
    """One real sample call (cache bypassed); htmx gets the result partial."""
    engine = get_object_or_404(Engine, name=name)
    result = services.check_engine(engine)
    if request.htmx:
        return render(request, "engines/detail.html#test-result", {"result": result})
    context = _detail_context(engine) | {"result": result}
    return render(request, "engines/detail.html", context)
