"""A local fake of Anthropic's Messages API, for driving the real ``anthropic`` SDK in tests.

Start it, point the SDK (or ``KAOS_LLM_BASE_URL``) at :attr:`FakeAnthropic.base_url`, and queue the
replies it should give, in order; when the queue is empty it repeats :attr:`default`. Every request
body is kept in :attr:`requests` so a test can check what was sent (model, system prompt, messages).

    with FakeAnthropic() as fake:
        fake.queue(Reply.json({"category": "infra", ...}), Reply.status(500), Reply.slow(3.0))
        ...

Reply kinds: ``Reply.json(obj)`` (the model answers with that JSON as text), ``Reply.text(str)``
(any text, e.g. prose or garbage), ``Reply.status(code, body)`` (an HTTP error with an Anthropic-style
error body), ``Reply.slow(seconds, then)`` (waits, then sends ``then``: for client timeouts),
``Reply.raw(bytes)`` (a body that is not JSON at all), ``Reply.rate_limited(seconds)`` (HTTP 429 with a
``Retry-After`` header), ``Reply.trickle(interval_s, then)`` (headers at once, then the body one byte
every ``interval_s``: read timeouts never fire), ``Reply.hang()`` (never answers; the handler thread
sleeps until the server stops). Binds 127.0.0.1 on a random free port only.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    status_code: int = 200
    text_body: str | None = None
    error_body: dict[str, Any] | None = None
    raw_body: bytes | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    trickle_s: float = 0.0

    @classmethod
    def json(cls, obj: Any) -> Reply:
        return cls(text_body=json.dumps(obj))

    @classmethod
    def text(cls, text: str) -> Reply:
        return cls(text_body=text)

    @classmethod
    def status(cls, code: int, message: str = "fake failure", kind: str = "api_error") -> Reply:
        return cls(status_code=code, error_body={"type": "error", "error": {"type": kind, "message": message}})

    @classmethod
    def raw(cls, body: bytes, status_code: int = 200) -> Reply:
        return cls(status_code=status_code, raw_body=body)

    @classmethod
    def slow(cls, seconds: float, then: Reply | None = None) -> Reply:
        base = then or cls.json({})
        return cls(base.status_code, base.text_body, base.error_body, base.raw_body, seconds, base.headers)

    @classmethod
    def rate_limited(cls, retry_after_s: float) -> Reply:
        base = cls.status(429, "rate limited", "rate_limit_error")
        return cls(429, None, base.error_body, None, 0.0, {"retry-after": f"{retry_after_s:g}"})

    @classmethod
    def trickle(cls, interval_s: float, then: Reply | None = None) -> Reply:
        base = then or cls.json({})
        return cls(base.status_code, base.text_body, base.error_body, base.raw_body, 0.0, base.headers, interval_s)

    @classmethod
    def hang(cls) -> Reply:
        return cls.slow(3600.0)


class FakeAnthropic:
    """The server; use as a context manager (``start``/``stop`` also work)."""

    def __init__(self, default: Reply | None = None) -> None:
        self.default = default or Reply.status(500, "no reply queued")
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control ----------------------------------------------------------------------------------
    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def next_reply(self) -> Reply:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def start(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                return

            def handle(self) -> None:
                # a client that gave up at its deadline closed the connection
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    super().handle()

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparseable": raw.decode("utf-8", "replace")}
                body["_path"] = self.path
                headers = {k.lower(): v for k, v in self.headers.items()}
                bearer = headers.get("authorization", "")
                body["_headers"] = headers
                body["_api_key"] = headers.get("x-api-key") or (
                    bearer[7:] if bearer.lower().startswith("bearer ") else None
                )
                with fake._lock:
                    fake.requests.append(body)
                reply = fake.next_reply()
                if reply.delay_s:
                    deadline = time.monotonic() + reply.delay_s
                    while fake._server is not None and time.monotonic() < deadline:
                        time.sleep(0.05)
                if not self.path.startswith("/v1/messages"):
                    reply = Reply.status(404, f"unknown path {self.path}", "not_found_error")
                self._send(reply, body)

            def _send(self, reply: Reply, request: dict[str, Any]) -> None:
                if reply.raw_body is not None:
                    payload = reply.raw_body
                elif reply.error_body is not None:
                    payload = json.dumps(reply.error_body).encode()
                else:
                    payload = json.dumps(
                        {
                            "id": f"msg_fake_{len(fake.requests):04d}",
                            "type": "message",
                            "role": "assistant",
                            "model": request.get("model", "fake-model"),
                            "content": [{"type": "text", "text": reply.text_body or ""}],
                            "stop_reason": "end_turn",
                            "stop_sequence": None,
                            "usage": {"input_tokens": 10, "output_tokens": 10},
                        }
                    ).encode()
                try:
                    self.send_response(reply.status_code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.send_header("request-id", f"req_fake_{len(fake.requests):04d}")
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    if reply.trickle_s:
                        for i in range(len(payload)):
                            if fake._server is None:
                                return
                            self.wfile.write(payload[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle_s)
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
