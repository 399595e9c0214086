"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions and embeddings
protocols.

For tests (any app's) and the engine benchmark: engines are exercised over real sockets, with
scripted answers, delays, error statuses, dropped connections and malformed bodies.

Use it as a context manager or through the ``fake_openai`` fixture (``tests/engines/conftest.py``)::

    from tests.engines.fake_openai import FakeOpenAI, Reply

    with FakeOpenAI() as server:
        server.push(Reply(status=429, headers={"Retry-After": "1"}),
                    Reply.translation("Ahoj"))
        engine = EngineFactory(base_url=server.base_url)   # http://127.0.0.1:PORT/v1
        ...
        assert len(server.requests) == 2

Scripted replies (``push``) are served first, in order; after that every request is answered by
``responder(body) -> Reply`` (default :func:`auto_reply`, which answers our translation, QE and
judge prompts deterministically; :func:`breaker_reply` adds the MT-breaker editor);
``POST /v1/embeddings`` is answered by ``embedder(body)`` (default :func:`auto_embeddings`: a
deterministic vector per input). ``latency`` delays every answer. ``requests`` records each
request's JSON body and headers; ``max_in_flight`` is the most requests handled at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeOpenAI", "RecordedRequest", "Reply", "auto_embeddings", "auto_reply", "breaker_reply",
]  # fmt: skip


@dataclass
class Reply:
    """One scripted answer."""

    content: str | None = "OK"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    tokens_in: int = 10
    tokens_out: int = 5
    raw: bytes | None = None  # sent as the body verbatim (malformed output)
    drop: bool = False  # close the connection without answering

    @classmethod
    def translation(cls, text: str, **kwargs: Any) -> Reply:
        return cls(f"<START OF TRANSLATION>{text}</END OF TRANSLATION>", **kwargs)

    @classmethod
    def score(cls, value: float | str, **kwargs: Any) -> Reply:
        return cls(f"Errors: none worth noting.\nSCORE |||{value}|||", **kwargs)

    @classmethod
    def judge(cls, value: int, level: str = "B2 (Upper Intermediate)", **kwargs: Any) -> Reply:
        return cls(f"Vocabulary is plain.\n[[[{value}, {level}]]]", **kwargs)

    @classmethod
    def error(cls, status: int, message: str = "scripted error", **kwargs: Any) -> Reply:
        body = json.dumps({"error": {"message": message, "type": "test"}}).encode()
        return cls(None, status=status, raw=body, **kwargs)

    @classmethod
    def embeddings(cls, vectors: list[list[float]], tokens_in: int = 7, **kwargs: Any) -> Reply:
        """An ``/embeddings`` answer (``data`` in input order)."""
        data = [
            {"object": "embedding", "index": i, "embedding": vector}
            for i, vector in enumerate(vectors)
        ]
        body = {
            "object": "list", "data": data, "model": "test-embedder",
            "usage": {"prompt_tokens": tokens_in, "total_tokens": tokens_in},
        }  # fmt: skip
        return cls(None, raw=json.dumps(body).encode(), **kwargs)

    def body(self, model: str) -> bytes:
        if self.raw is not None:
            return self.raw
        return json.dumps(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": self.tokens_in,
                    "completion_tokens": self.tokens_out,
                    "total_tokens": self.tokens_in + self.tokens_out,
                },
            }
        ).encode()


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def prompt(self) -> str:
        return self.body["messages"][-1]["content"]


_QE = re.compile(r"SOURCE: \|\|\|(.*)\|\|\|\nTRANSLATION: \|\|\|(.*)\|\|\|\Z", re.DOTALL)


def auto_reply(body: dict[str, Any]) -> Reply:
    """Deterministic answers to our own prompts (engines.prompts), for runs with no script.

    Translation: ``"[xx] <source>"``; QE: a score from the translation's length (so different
    translations get different scores); judge: proficiency from the text's length; anything
    else: ``"OK"``.
    """
    prompt = body["messages"][-1]["content"]
    if "<START OF TRANSLATION>" in prompt:
        source = prompt.rsplit(" text:\n", 1)[-1]
        return Reply.translation(f"[xx] {source}")
    match = _QE.search(prompt)
    if match:
        return Reply.score(float(40 + len(match.group(2)) % 61))
    if "[[[" in prompt:
        text = prompt.rsplit("):\n", 1)[-1]
        return Reply.judge(min(120, len(text)))
    return Reply("OK")


def auto_embeddings(body: dict[str, Any]) -> Reply:
    """A 3-dimensional vector per input from its length and its vowels and spaces, so equal
    inputs get equal vectors; usage counts one token per word."""
    inputs = body.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    vectors = [
        [float(len(text)), float(sum(c in "aeiou" for c in text)), float(text.count(" ") + 1)]
        for text in inputs
    ]
    return Reply.embeddings(vectors, tokens_in=sum(len(str(t).split()) for t in inputs))


_SOURCE = re.compile(r"SOURCE \|\|\|(.*?)\|\|\|", re.DOTALL)


def breaker_reply(body: dict[str, Any]) -> Reply:
    """An "LLM" for the MT-breaker prompts (``search.breaker.prompts``): adds a word to the last
    source it proposed (or writes a fresh text); everything else (translation, QE) as
    :func:`auto_reply`."""
    messages = body["messages"]
    if "SOURCE |||<SOURCE_TEXT>|||" not in messages[0]["content"]:
        return auto_reply(body)
    proposed = [
        found[-1]
        for m in messages
        if m["role"] == "assistant" and (found := _SOURCE.findall(m["content"]))
    ]
    request = re.search(r"Request ([\d-]+)\.", messages[0]["content"])
    label = request.group(1) if request else "?"
    text = f"{proposed[-1]} more" if proposed else f"Fresh text number {label}."
    return Reply(f"Thinking about it.\nSOURCE |||{text}|||", tokens_in=100, tokens_out=20)


class FakeOpenAI:
    """A threaded HTTP server on 127.0.0.1 (a free port) answering ``POST /v1/chat/completions``
    and ``POST /v1/embeddings``."""

    def __init__(
        self,
        responder: Callable[[dict[str, Any]], Reply] = auto_reply,
        *,
        embedder: Callable[[dict[str, Any]], Reply] = auto_embeddings,
        latency: float = 0.0,
        record: bool = True,
    ) -> None:
        self.responder = responder
        self.embedder = embedder
        self.latency = latency
        self.record = record
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---------------------------------------------------------------------------

    def push(self, *replies: Reply) -> None:
        """Queue replies served, in order, before the responder takes over."""
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.in_flight = self.max_in_flight = 0

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the server is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes; with Nagle's algorithm and the
            # client's delayed ACK that would add ~40 ms to every answer.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def do_POST(self) -> None:
                fake._handle(self)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- serving -----------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = {}
            if self.record:
                with self._lock:
                    self.requests.append(
                        RecordedRequest(handler.path, body, dict(handler.headers.items()))
                    )
            with self._lock:
                scripted = self._script.popleft() if self._script else None
            reply = scripted
            if reply is None and handler.path.endswith("/chat/completions"):
                reply = self.responder(body)
            elif reply is None and handler.path.endswith("/embeddings"):
                reply = self.embedder(body)
            if reply is None:
                reply = Reply.error(404, f"no route {handler.path}")
            if self.latency or reply.delay:
                time.sleep(self.latency + reply.delay)
            if reply.drop:
                handler.close_connection = True
                handler.connection.shutdown(2)
                return
            payload = reply.body(str(body.get("model", "")))
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (e.g. its timeout fired while we slept): nothing to answer.
            handler.close_connection = True
        finally:
            with self._lock:
                self.in_flight -= 1
