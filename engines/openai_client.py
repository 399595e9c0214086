"""HTTP clients for the OpenAI-compatible ``/chat/completions`` and ``/embeddings`` APIs (one
attempt per call).

No Django import and no retries here: the call path (``engines.callpath``) owns retries,
backoff, the concurrency limit, the cache and the ledger. This module's job is one request with
an explicit timeout and a strict classification of what went wrong:

* transient (``permanent=False``): timeouts, connection errors, 408, 409, 429 and 5xx — the
  same request may succeed later; a 429's ``Retry-After`` is carried on the error;
* permanent: 400, 401, 403, 404 and every other 4xx, and a 200 whose body is not a chat
  completion (malformed JSON, no choices). The call path retries garbage a bounded number of
  times before treating it as permanent.
"""

from __future__ import annotations

import email.utils
import functools
import json
import ssl
import time
from collections.abc import Sequence
from typing import Any

import httpx

from engines.interfaces import Completion, EngineError, Message, PermanentEngineError
from formats import strict_json

__all__ = [
    "ChatClient",
    "EmbeddingsClient",
    "MalformedResponse",
    "TransientError",
    "parse_embeddings",
    "parse_retry_after",
]

_TRANSIENT_STATUS = {408, 409, 425, 429}


class TransientError(EngineError):
    """A failure worth retrying; ``retry_after`` is the server's requested wait, if any."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message, permanent=False)
        self.retry_after = retry_after


class MalformedResponse(PermanentEngineError):
    """HTTP 200 whose body is not a usable chat completion ("garbage")."""


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _error_detail(response: httpx.Response) -> str:
    """The provider's error message, shortened; never echoes request headers."""
    try:
        body = response.json()
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        if isinstance(message, str) and message:
            return message[:300]
    except (json.JSONDecodeError, ValueError, AttributeError):
        pass
    return response.text[:300]


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default verifying context, built once per process: building it reads the CA
    bundle (~60 ms), and a client is made per batch. An SSLContext is safe to share."""
    return httpx.create_ssl_context()


class ChatClient:
    """One OpenAI-compatible endpoint. Thread-safe: one instance serves a whole batch."""

    path = "/chat/completions"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None,
        timeout_s: float,
        max_connections: int,
    ) -> None:
        self.model = model
        # Kept so the call path can mask it in error text (engines.keys.mask_secrets).
        self.api_key = api_key
        self.url = base_url.rstrip("/") + self.path
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            follow_redirects=False,
            verify=_tls_context(),
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(self, messages: Sequence[Message], params: dict[str, Any]) -> Completion:
        body: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        extra = params.get("extra_body") or {}
        body.update({k: v for k, v in params.items() if k != "extra_body"})
        body.update(extra)
        return parse_completion(self._post(body))

    def _post(self, body: dict[str, Any]) -> bytes:
        """The body of a 200 answer; every other outcome raised, classified."""
        try:
            response = self._http.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise TransientError(f"timed out talking to {self.url}: {type(exc).__name__}") from exc
        except httpx.TransportError as exc:
            raise TransientError(f"cannot reach {self.url}: {type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if status >= 500 or status in _TRANSIENT_STATUS:
            raise TransientError(
                f"HTTP {status} from {self.url}: {_error_detail(response)}",
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
            )
        if status != 200:
            raise EngineError(
                f"HTTP {status} from {self.url}: {_error_detail(response)}", permanent=True
            )
        return response.content


class EmbeddingsClient(ChatClient):
    """``POST /embeddings`` with a batch of inputs, behind the chat client's one-request shape.

    The call path sends every remote request as ``complete(messages, params)``; here each
    message's content is one input, and the answer's text is the JSON list of vectors (in input
    order), so the cache stores it like any other answer.
    """

    path = "/embeddings"

    def complete(self, messages: Sequence[Message], params: dict[str, Any]) -> Completion:
        inputs = [message["content"] for message in messages]
        body: dict[str, Any] = {"model": self.model, "input": inputs, **params}
        vectors, tokens_in = parse_embeddings(self._post(body), len(inputs))
        return Completion(json.dumps(vectors), tokens_in=tokens_in, tokens_out=0)


def parse_embeddings(content: bytes, expected: int) -> tuple[list[list[float]], int]:
    """The vectors of a 200 ``/embeddings`` answer, in input order, and the billed tokens.

    Providers may return ``data`` out of order; each item carries its ``index``. A vector
    count, a dimension or a value that does not fit is garbage (re-asked, then permanent).
    """
    try:
        data = json.loads(content)
        items = data["data"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise MalformedResponse(f"the response has no embeddings data: {content[:120]!r}") from exc
    if not isinstance(items, list) or len(items) != expected:
        count = len(items) if isinstance(items, list) else "no"
        raise MalformedResponse(f"asked for {expected} embeddings, got {count}")
    vectors: list[list[float] | None] = [None] * expected
    for position, item in enumerate(items):
        index = item.get("index", position) if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < expected or vectors[index] is not None:
            raise MalformedResponse(f"embedding {position} has a bad or repeated index")
        if not (
            isinstance(vector, list)
            and vector
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vector)
        ):
            raise MalformedResponse(f"embedding {index} is not a list of numbers")
        vectors[index] = [float(v) for v in vector]
    done = [v for v in vectors if v is not None]
    if len({len(v) for v in done}) != 1:
        raise MalformedResponse("the embeddings do not all have the same dimension")
    usage = data.get("usage") if isinstance(data, dict) else None
    tokens = usage.get("prompt_tokens", 0) if isinstance(usage, dict) else 0
    return done, tokens if isinstance(tokens, int) and tokens >= 0 else 0


def parse_completion(content: bytes) -> Completion:
    """The first choice's message text and the billed token counts of a 200 response."""
    try:
        data = strict_json.loads(content)  # a server's answer is untrusted input too
    except strict_json.JSONInputError as exc:
        raise MalformedResponse(f"the response is not JSON ({exc}): {content[:120]!r}") from exc
    try:
        text = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise MalformedResponse("the response has no choices[0].message.content") from exc
    if not isinstance(text, str):
        raise MalformedResponse("choices[0].message.content is not a string")
    usage = data.get("usage") if isinstance(data, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    tokens_in = usage.get("prompt_tokens", 0)
    tokens_out = usage.get("completion_tokens", 0)
    return Completion(
        text=text,
        tokens_in=tokens_in if isinstance(tokens_in, int) and tokens_in >= 0 else 0,
        tokens_out=tokens_out if isinstance(tokens_out, int) and tokens_out >= 0 else 0,
    )
