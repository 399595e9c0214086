"""The one call path: every engine call goes through here.

For remote kinds (``openai_chat``) a batch of requests is handled as:

1. look every request up in the response cache (one query; identical requests in the batch are
   sent once);
2. send the misses on the process's request threads, at most ``max_concurrency`` in flight
   per engine across threads, processes and machines (``engines.limiter``); each request has
   an explicit timeout, and transient failures are retried with exponential backoff and full
   jitter, honouring ``Retry-After`` on 429; answers in the wrong format are re-asked a
   bounded number of times;
3. as answers land, book them: one ledger row per request sent (tokens, cost, latency,
   attempts, error) and its cache entry, in one transaction per group of landed answers; one
   row for the batch's cache hits (zero cost);
4. raise :class:`EngineError` if any request failed, after the ledger and the cache are written,
   so a retried batch pays only for what failed.

Worker threads only do HTTP and parsing; every database read and write happens on the calling
thread, so the call path works inside Django's per-thread connection model (and the test
suite's transactions).

Local kinds (heuristic, synthetic, replay, artificial crowd) go through :meth:`CallPath.local`:
one ledger row per batch, no cache (they are deterministic and cheaper than a lookup).

Local models (``engines.local_models``) go through :meth:`CallPath.model`: a model batch costs
more than a cache lookup, so they get the response cache (keyed by the model files' fingerprint
and the parameters that change answers), the concurrency limit (``max_concurrency`` processes run
the model at once: a GPU's memory is the usual reason to lower it) and one ledger row per batch
computed, with the time it took and zero money cost.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction

from engines.interfaces import EngineError, Message
from engines.keys import mask_secrets, read_api_key
from engines.limiter import SlotTimeout, limiter
from engines.models import MAX_CONCURRENCY, CachedResponse, Engine, EngineCall
from engines.openai_client import ChatClient, MalformedResponse, TransientError
from engines.prompts import UnparseableOutput

__all__ = ["Answer", "CallPath", "RemoteJob", "cache_key", "local_cache_key"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
_CACHE_QUERY_CHUNK = 500
_COST_QUANTUM = Decimal("0.00000001")


_REQUEST_THREADS = 4 * MAX_CONCURRENCY
_pools: dict[int, ThreadPoolExecutor] = {}


def _request_threads() -> ThreadPoolExecutor:
    """The threads that send remote requests, kept from batch to batch: starting a hundred
    threads per batch cost ~1 ms each on a busy machine (bench/breaker_throughput.py). One
    pool per process id: a forked child must not count on its parent's idle threads. Each
    batch keeps at most its engine's ``max_concurrency`` requests in the pool."""
    pid = os.getpid()
    pool = _pools.get(pid)
    if pool is None:
        pool = _pools.setdefault(
            pid, ThreadPoolExecutor(max_workers=_REQUEST_THREADS, thread_name_prefix="engine")
        )
    return pool


def _setting(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def cache_key(
    engine: Engine, operation: str, prompt_version: str, messages: Sequence[Message], params: dict
) -> str:
    """SHA-256 of everything that determines a remote answer (not name, price or limits)."""
    material = {
        "kind": engine.kind,
        "base_url": engine.base_url.rstrip("/"),
        "model": engine.model,
        "operation": operation,
        "prompt_version": prompt_version,
        "params": params,
        "messages": list(messages),
    }
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def local_cache_key(kind: str, model_key: dict[str, Any], operation: str, item: Any) -> str:
    """SHA-256 of what determines a local model's answer: the files' fingerprint and the
    answer-changing parameters (in ``model_key``), the operation and the input."""
    material = {"kind": kind, "model": model_key, "operation": operation, "input": item}
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RemoteJob:
    """One request: the messages to send and how to read the answer."""

    messages: list[Message]
    params: dict[str, Any]
    parse: Callable[[str], Any]
    prompt_version: str
    key: str = ""


@dataclass(frozen=True)
class Answer:
    value: Any
    text: str
    tokens_in: int
    tokens_out: int
    cache_hit: bool


@dataclass
class _Outcome:
    value: Any = None
    text: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    attempts: int = 0
    error: EngineError | None = None


@dataclass
class CallPath:
    """Calls of one engine on behalf of one ``scope`` (e.g. ``"search_run:12"``)."""

    engine: Engine
    scope: str = ""
    use_cache: bool = True

    # --- costs -------------------------------------------------------------------------------

    def cost_of(self, tokens_in: int, tokens_out: int) -> Decimal:
        cost = (
            Decimal(tokens_in) * self.engine.price_in_per_1k
            + Decimal(tokens_out) * self.engine.price_out_per_1k
        ) / 1000
        return cost.quantize(_COST_QUANTUM)

    def _row(self, operation: str, **fields: Any) -> EngineCall:
        return EngineCall(engine=self.engine, scope=self.scope, operation=operation, **fields)

    # --- local kinds ---------------------------------------------------------------------------

    def local(self, operation: str, n_items: int, fn: Callable[[], T]) -> T:
        """Run ``fn`` (a whole batch answered in-process) and record one ledger row."""
        start = time.perf_counter()
        try:
            result = fn()
        except EngineError as exc:
            error = mask_secrets(exc.message)
            self._write([self._row(operation, items=n_items, latency_ms=_ms(start), error=error)])
            raise
        self._write([self._row(operation, items=n_items, latency_ms=_ms(start))])
        return result

    # --- local models --------------------------------------------------------------------------

    def model(
        self,
        operation: str,
        inputs: Sequence[Any],
        model_key: dict[str, Any],
        compute: Callable[[list[Any]], list[Any]],
    ) -> list[Any]:
        """Answer every input (JSON-ready) in order: cache hits from the response cache, the
        misses (each distinct input once) in one ``compute`` call inside a limiter slot."""
        if not inputs:
            return []
        keys = [local_cache_key(self.engine.kind, model_key, operation, item) for item in inputs]
        answers: dict[str, Any] = {}
        if self.use_cache:
            answers.update({k: a.value for k, a in self._cached_keys(keys).items()})
        pending: dict[str, Any] = {}
        for key, item in zip(keys, inputs, strict=True):
            if key not in answers:
                pending.setdefault(key, item)
        hits = len(keys) - len(pending)
        if pending:
            answers.update(self._compute(operation, pending, compute))
        if hits:
            self._write([self._row(operation, items=hits, cache_hit=True, attempts=0)])
        return [answers[key] for key in keys]

    def _compute(
        self, operation: str, pending: dict[str, Any], compute: Callable[[list[Any]], list[Any]]
    ) -> dict[str, Any]:
        start = time.perf_counter()
        wait_s = _setting("ENGINE_SLOT_WAIT_S", 600.0)
        try:
            with limiter().slot(self.engine.pk, self.engine.max_concurrency, wait_s):
                values = compute(list(pending.values()))
            if len(values) != len(pending):
                raise EngineError(
                    f"engine {self.engine.name}: the model returned {len(values)} answers for "
                    f"{len(pending)} inputs",
                    permanent=True,
                )
        except EngineError as exc:
            row = self._row(operation, items=len(pending), latency_ms=_ms(start), error=exc.message)
            self._write([row])
            raise
        answered = dict(zip(pending, values, strict=True))
        cached = [
            CachedResponse(
                key=key,
                kind=self.engine.kind,
                model=self.engine.model,
                operation=operation,
                prompt_version="local-model",
                response_text="",
                value=value,
            )
            for key, value in answered.items()
        ]
        with transaction.atomic():
            self._write([self._row(operation, items=len(pending), latency_ms=_ms(start))])
            if self.use_cache:
                CachedResponse.objects.bulk_create(cached, ignore_conflicts=True, batch_size=500)
        return answered

    def _cached_keys(self, keys: Sequence[str]) -> dict[str, Answer]:
        return self._cached(
            [RemoteJob([], {}, lambda text: text, "", key) for key in dict.fromkeys(keys)]
        )

    # --- remote kinds --------------------------------------------------------------------------

    def _api_key(self) -> str | None:
        """Read the key from the environment now, in the process making the call."""
        name = self.engine.api_key_env
        if not name:
            return None
        try:
            value = read_api_key(name)
        except PermissionError as exc:
            raise EngineError(f"engine {self.engine.name}: {exc}", permanent=True) from None
        if not value:
            raise EngineError(
                f"engine {self.engine.name}: the environment variable {name} (its API key) "
                "is not set in this process",
                permanent=True,
            )
        return value

    def remote(
        self, operation: str, jobs: Sequence[RemoteJob], *, client: type[ChatClient] = ChatClient
    ) -> list[Answer]:
        """Answer every job, in order, through cache, limit, retries and ledger. ``client``:
        the endpoint's client (``EmbeddingsClient`` for ``/embeddings``)."""
        if not jobs:
            return []
        keyed = [
            job
            if job.key
            else RemoteJob(
                job.messages,
                job.params,
                job.parse,
                job.prompt_version,
                cache_key(self.engine, operation, job.prompt_version, job.messages, job.params),
            )
            for job in jobs
        ]
        answers: dict[str, Answer] = {}
        if self.use_cache:
            answers.update(self._cached(keyed))
        pending: dict[str, RemoteJob] = {}
        for job in keyed:
            if job.key not in answers:
                pending.setdefault(job.key, job)
        hits = sum(1 for job in keyed if job.key in answers)
        outcomes: dict[str, _Outcome] = {}
        if pending:
            api_key = self._api_key()
            outcomes = self._send(operation, list(pending.values()), api_key, client)
        # Items served by another request of the same batch count as cache hits too.
        hits += len(keyed) - hits - len(pending)
        if hits:
            self._write([self._row(operation, items=hits, cache_hit=True, attempts=0)])
        failed = [outcome.error for outcome in outcomes.values() if outcome.error]
        if failed:
            raise EngineError(
                f"engine {self.engine.name}: {len(failed)} of {len(pending)} {operation} "
                f"request(s) failed; first: {failed[0].message}",
                permanent=any(error.permanent for error in failed),
            )
        for key, outcome in outcomes.items():
            answers[key] = Answer(
                outcome.value, outcome.text, outcome.tokens_in, outcome.tokens_out, False
            )
        first_use: set[str] = set()
        result = []
        for job in keyed:
            answer = answers[job.key]
            if job.key in outcomes and job.key not in first_use:
                first_use.add(job.key)
            elif not answer.cache_hit:
                answer = Answer(answer.value, answer.text, 0, 0, True)
            result.append(answer)
        return result

    def _cached(self, jobs: Sequence[RemoteJob]) -> dict[str, Answer]:
        keys = list({job.key for job in jobs})
        found: dict[str, Answer] = {}
        for start in range(0, len(keys), _CACHE_QUERY_CHUNK):
            chunk = keys[start : start + _CACHE_QUERY_CHUNK]
            for key, text, value in CachedResponse.objects.filter(key__in=chunk).values_list(
                "key", "response_text", "value"
            ):
                found[key] = Answer(value, text, 0, 0, True)
        return found

    def _send(
        self,
        operation: str,
        jobs: list[RemoteJob],
        api_key: str | None,
        client_class: type[ChatClient] = ChatClient,
    ) -> dict[str, _Outcome]:
        engine = self.engine
        slots = limiter()
        workers = max(1, min(engine.max_concurrency, len(jobs)))
        with client_class(
            engine.base_url,
            engine.model,
            api_key=api_key,
            timeout_s=engine.timeout_s,
            max_connections=engine.max_concurrency,
        ) as client:

            def run(job: RemoteJob) -> _Outcome:
                return self._attempts(client, slots, job)

            results: dict[str, _Outcome] = {}
            # The limiter's connections stay open for the next batch (engines.limiter).
            if workers == 1:
                for job in jobs:
                    self._settle(operation, [(job, run(job))], results)
            else:
                self._concurrently(operation, jobs, run, workers, results)
        return results

    def _concurrently(
        self,
        operation: str,
        jobs: list[RemoteJob],
        run: Callable[[RemoteJob], _Outcome],
        workers: int,
        results: dict[str, _Outcome],
    ) -> None:
        """``run`` every job on the process's request threads, ``workers`` in flight at once;
        answers are settled in this thread as they land (every answer received so far at
        once): a worker killed half-way through a batch keeps (and never pays again for) what
        it booked."""
        pool = _request_threads()
        todo = iter(jobs)
        futures: dict[Future[_Outcome], RemoteJob] = {}

        def submit(n: int) -> set[Future[_Outcome]]:
            new = {pool.submit(run, job): job for job in islice(todo, n)}
            futures.update(new)
            return set(new)

        waiting = submit(workers)
        try:
            while waiting:
                landed, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                waiting |= submit(len(landed))  # keeps the engine busy while this thread books
                self._settle(operation, [(futures[f], f.result()) for f in landed], results)
        finally:
            for future in waiting:
                future.cancel()
            wait(waiting)

    def _attempts(self, client: ChatClient, slots: Any, job: RemoteJob) -> _Outcome:
        engine = self.engine
        max_parse = int(engine.params.get("max_parse_attempts", 3))
        wait_s = _setting("ENGINE_SLOT_WAIT_S", 600.0)
        outcome = _Outcome()
        retries = garbage = 0
        start = time.perf_counter()
        while True:
            outcome.attempts += 1
            try:
                with slots.slot(engine.pk, engine.max_concurrency, wait_s):
                    completion = client.complete(job.messages, job.params)
            except SlotTimeout as exc:
                outcome.error = exc
                break
            except TransientError as exc:
                if retries >= engine.max_retries:
                    outcome.error = EngineError(
                        f"{exc.message} (gave up after {outcome.attempts} attempts)",
                        permanent=False,
                    )
                    break
                retries += 1
                time.sleep(self._backoff(retries, exc.retry_after))
                continue
            except MalformedResponse as exc:
                garbage += 1
                if garbage >= max_parse:
                    outcome.error = EngineError(
                        f"{exc.message} ({garbage} malformed responses)", permanent=True
                    )
                    break
                continue
            except EngineError as exc:
                outcome.error = exc
                break
            outcome.tokens_in += completion.tokens_in
            outcome.tokens_out += completion.tokens_out
            try:
                outcome.value = job.parse(completion.text)
            except UnparseableOutput as exc:
                garbage += 1
                if garbage >= max_parse:
                    outcome.error = EngineError(
                        f"{exc.message} ({garbage} answers in a row); last answer: "
                        f"{completion.text[:200]!r}",
                        permanent=True,
                    )
                    break
                continue
            outcome.text = completion.text
            break
        outcome.latency_ms = _ms(start)
        if outcome.error:
            # Providers echo keys in their error messages; this text is stored in the ledger,
            # raised to the caller (and the engine test page) and logged.
            outcome.error = EngineError(
                mask_secrets(outcome.error.message, [client.api_key]), outcome.error.permanent
            )
            logger.warning("engine %s: %s", engine.name, outcome.error.message)
        return outcome

    def _settle(
        self,
        operation: str,
        landed: list[tuple[RemoteJob, _Outcome]],
        results: dict[str, _Outcome],
    ) -> None:
        """Book answered requests in the ledger and, those that succeeded, in the cache.

        All in one transaction: a paid answer is either cached and booked, or neither (and
        then asked again), so the ledger never shows one cache key paid twice. One transaction
        for every answer that has landed, not one per answer: a concurrent batch's answers
        arrive together, and a transaction each cost more than the rest of the call path.
        """
        rows = [
            self._row(
                operation,
                tokens_in=outcome.tokens_in,
                tokens_out=outcome.tokens_out,
                cost=self.cost_of(outcome.tokens_in, outcome.tokens_out),
                latency_ms=outcome.latency_ms,
                attempts=outcome.attempts,
                error=outcome.error.message if outcome.error else "",
            )
            for _job, outcome in landed
        ]
        cached = [
            CachedResponse(
                key=job.key,
                kind=self.engine.kind,
                model=self.engine.model,
                operation=operation,
                prompt_version=job.prompt_version,
                response_text=outcome.text,
                value=outcome.value,
                tokens_in=outcome.tokens_in,
                tokens_out=outcome.tokens_out,
            )
            for job, outcome in landed
            if outcome.error is None and self.use_cache
        ]
        with transaction.atomic():
            self._write(rows)
            if cached:
                CachedResponse.objects.bulk_create(cached, ignore_conflicts=True)
        for job, outcome in landed:
            results[job.key] = outcome

    @staticmethod
    def _backoff(retry: int, retry_after: float | None) -> float:
        """Seconds to sleep before retry number ``retry`` (1-based).

        Full jitter (AWS architecture blog, "Exponential Backoff and Jitter") spreads retries of
        many threads; a server's ``Retry-After`` is a floor, capped so a hostile value cannot
        park a worker for hours.
        """
        base = _setting("ENGINE_BACKOFF_BASE_S", 0.5)
        cap = _setting("ENGINE_BACKOFF_MAX_S", 30.0)
        delay = random.uniform(0, min(cap, base * 2 ** (retry - 1)))
        if retry_after is not None:
            delay = max(delay, min(retry_after, _setting("ENGINE_RETRY_AFTER_MAX_S", 120.0)))
        return delay

    # --- ledger ----------------------------------------------------------------------------------

    def _write(self, rows: list[EngineCall]) -> None:
        if rows:
            EngineCall.objects.bulk_create(rows)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
