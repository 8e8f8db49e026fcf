"""The one module that talks to an LLM (Anthropic's Messages API through the official SDK).

Everything else asks :meth:`LLMClient.ask_json` a question with a validator and gets back an
:class:`LLMAnswer`: either a validated value or a one-line reason why there is none. Nothing here
raises on a model problem — no key, timeout, HTTP error, refusal, prose instead of JSON, JSON of the
wrong shape — so every caller keeps its non-LLM default. Validated answers are cached in the
``llm_cache`` table, keyed by (purpose, model, caller's key), so each question is paid for once.

The model's text is parsed as data only (``json.loads`` plus the caller's validator); it is never
evaluated, executed or used to choose code paths beyond the validator's checks. Only the validated
fields are cached, and a reply body larger than ``KAOS_LLM_MAX_REPLY_BYTES`` is dropped unread.

``KAOS_LLM_TIMEOUT_S`` is a wall-clock deadline for the whole call, retries and their waits
included: each attempt runs on a worker thread that is abandoned at the deadline (its HTTP client
is closed and replaced), so a server that hangs, trickles its body a byte at a time, or answers 429
with ``Retry-After: 3600`` costs the caller at most the deadline. The SDK's own retries are off
(they would honour any Retry-After); this module retries, and only when the wait fits the deadline.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .settings import Settings
from .store import transaction

T = TypeVar("T")

_FENCE = re.compile(r"^```(?:json)?\s*\n(?P<body>.*)\n```$", re.DOTALL)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class AnswerRejected(ValueError):
    """A validator's verdict: the model's JSON does not have the required shape."""


class DeadlineExceeded(TimeoutError):
    """The whole call (attempts and waits) ran past ``KAOS_LLM_TIMEOUT_S``."""


class MalformedResponse(ValueError):
    """The HTTP body is not a Messages API response (a proxy's HTML page, truncated JSON, ...)."""


_RETRY_STATUSES = (408, 409, 429)


@dataclass(frozen=True)
class LLMAnswer(Generic[T]):
    """``value`` when ``ok``; otherwise ``error`` says why (timeout, HTTP 500, not JSON, …)."""

    ok: bool
    value: T | None = None
    cached: bool = False
    error: str | None = None


def parse_strict_json(text: str) -> dict[str, Any]:
    """The model's reply as a JSON object: the whole reply (optionally one ```json fence), nothing else."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    try:
        value = json.loads(body)
    except ValueError:
        raise AnswerRejected("the reply is not JSON") from None
    if not isinstance(value, dict):
        raise AnswerRejected("the reply is JSON but not an object")
    return value


def clean_text(value: Any, field: str, limit: int = 300) -> str:
    """A short single-paragraph string from the model, or :class:`AnswerRejected`."""
    if not isinstance(value, str):
        raise AnswerRejected(f"{field} must be a string")
    text = " ".join(_CONTROL.sub(" ", value).split())
    if not text:
        raise AnswerRejected(f"{field} is empty")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clamp_unit(value: Any, field: str) -> float:
    """A number clamped to [0, 1]; words such as "high" and booleans are rejected."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise AnswerRejected(f"{field} must be a number between 0 and 1")
    return min(1.0, max(0.0, float(value)))


def choice(value: Any, field: str, allowed: tuple[str, ...]) -> str:
    """One of ``allowed``, exactly (no case folding, no partial match)."""
    if not isinstance(value, str) or value not in allowed:
        raise AnswerRejected(f"{field} must be one of {', '.join(allowed)}")
    return value


class LLMClient:
    """An Anthropic client built from :class:`Settings`, or a disabled one that says why."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model = settings.llm_model
        self._sdk: Any = None
        if not settings.llm:
            self.disabled_reason: str | None = "LLM calls are turned off (KAOS_LLM=0)"
        elif not settings.anthropic_api_key:
            self.disabled_reason = (
                "no ANTHROPIC_API_KEY set: LLM diagnosis and the logical/alignment validators are off"
            )
        else:
            self.disabled_reason = None

    @property
    def enabled(self) -> bool:
        return self.disabled_reason is None

    def status(self) -> dict[str, Any]:
        """Whether LLM calls are on, and if not why (what the CLI prints as "LLM … off")."""
        return {
            "enabled": self.enabled,
            "reason": self.disabled_reason,
            "model": self.model,
            "base_url": self.settings.llm_base_url or None,
            "timeout_s": self.settings.llm_timeout_s,
        }

    def _client(self) -> Any:
        if self._sdk is None:
            import anthropic

            self._sdk = anthropic.Anthropic(
                api_key=self.settings.anthropic_api_key,
                base_url=self.settings.llm_base_url or None,
                timeout=self.settings.llm_timeout_s,
                max_retries=0,  # retries are ours (see _call): the SDK would sleep out any Retry-After
            )
        return self._sdk

    def _abandon_client(self) -> None:
        """Drop the HTTP client an abandoned attempt is still using (closing it ends its socket reads)."""
        sdk, self._sdk = self._sdk, None
        if sdk is not None:
            with contextlib.suppress(Exception):  # closing under a reading thread may complain; it is gone anyway
                sdk.close()

    @staticmethod
    def cache_key(purpose: str, model: str, key: str) -> str:
        """The cache row's key: one answer per purpose, model and input."""
        return hashlib.sha256(f"{purpose}\x1f{model}\x1f{key}".encode()).hexdigest()

    def cached(self, conn: sqlite3.Connection, purpose: str, key: str, validate: Callable[[Any], T]) -> T | None:
        """A cached, still-valid answer, or None. Reads only (safe on read-only connections)."""
        try:
            row = conn.execute(
                "SELECT answer FROM llm_cache WHERE key = ?", (self.cache_key(purpose, self.model, key),)
            ).fetchone()
        except sqlite3.OperationalError:
            return None
        if row is None:
            return None
        try:
            return validate(json.loads(row[0]))
        except (ValueError, AnswerRejected):
            return None

    def ask_json(
        self,
        *,
        purpose: str,
        system: str,
        prompt: str,
        validate: Callable[[dict[str, Any]], T],
        conn: sqlite3.Connection | None = None,
        cache_key: str | None = None,
        now: float = 0.0,
    ) -> LLMAnswer[T]:
        """Ask for one JSON object, validate it, cache it. Never raises for model or network trouble."""
        if conn is not None and cache_key is not None:
            hit = self.cached(conn, purpose, cache_key, validate)
            if hit is not None:
                return LLMAnswer(True, hit, cached=True)
        if not self.enabled:
            return LLMAnswer(False, error=self.disabled_reason)
        try:
            text = self._call(system, prompt)
            raw = parse_strict_json(text)
            value = validate(raw)
        except AnswerRejected as exc:
            return LLMAnswer(False, error=f"unusable answer: {exc}")
        except Exception as exc:  # the SDK's errors, timeouts, anything: the caller keeps its default
            return LLMAnswer(False, error=describe_error(exc))
        if conn is not None and cache_key is not None:
            self._store(conn, purpose, cache_key, value, now)
        return LLMAnswer(True, value)

    def _call(self, system: str, prompt: str) -> str:
        """The reply's text, within the deadline, retrying what is worth retrying while time is left."""
        self._client()  # importing the SDK (~1-2 s the first time) is local work, not waiting on the server
        deadline = time.monotonic() + self.settings.llm_timeout_s
        attempt = 0
        while True:
            try:
                return self._attempt(system, prompt, deadline)
            except (AnswerRejected, DeadlineExceeded, MalformedResponse):
                raise
            except Exception as exc:
                wait = self._retry_wait(exc, attempt)
                if wait is None or time.monotonic() + wait >= deadline:
                    raise
                time.sleep(wait)
                attempt += 1

    def _retry_wait(self, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before retrying ``exc`` (the server's Retry-After, else backoff), or None."""
        if attempt >= self.settings.llm_max_retries:
            return None
        status = getattr(exc, "status_code", None)
        name = type(exc).__name__
        if status is None and "Connection" not in name and "Timeout" not in name:
            return None
        if status is not None and status not in _RETRY_STATUSES and status < 500:
            return None
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        try:
            retry_after = float(headers.get("retry-after", ""))
        except (TypeError, ValueError):
            retry_after = -1.0
        return retry_after if retry_after >= 0 else 0.5 * 2**attempt

    def _attempt(self, system: str, prompt: str, deadline: float) -> str:
        """One request on a worker thread, abandoned at the deadline however the server behaves."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded()
        client = self._client().with_options(timeout=remaining, max_retries=0)
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["text"] = self._request(client, system, prompt)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=work, name="kaos-llm-call", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            self._abandon_client()
            raise DeadlineExceeded()
        if "error" in box:
            raise box["error"]
        return str(box["text"])

    def _request(self, client: Any, system: str, prompt: str) -> str:
        """POST one Messages request and read at most ``llm_max_reply_bytes`` of the body."""
        cap = self.settings.llm_max_reply_bytes
        with client.messages.with_streaming_response.create(
            model=self.model,
            max_tokens=self.settings.llm_max_tokens,
            system=system,
            messages=[{"role": "user", "content": prompt}],
        ) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > cap:
                    raise AnswerRejected(f"the reply is larger than {cap} bytes (KAOS_LLM_MAX_REPLY_BYTES)")
        return reply_text(bytes(body))

    def _store(self, conn: sqlite3.Connection, purpose: str, key: str, value: Any, now: float) -> None:
        try:
            with transaction(conn):
                conn.execute(
                    "INSERT OR REPLACE INTO llm_cache (key, purpose, model, answer, created_at) VALUES (?, ?, ?, ?, ?)",
                    (
                        self.cache_key(purpose, self.model, key),
                        purpose,
                        self.model,
                        json.dumps(cacheable(value), sort_keys=True, ensure_ascii=False),
                        now,
                    ),
                )
        except sqlite3.Error:
            pass  # a read-only or busy file only loses the cache entry, never the answer


def reply_text(body: bytes) -> str:
    """The text blocks of a Messages API response body."""
    try:
        data = json.loads(body)
    except ValueError:
        raise MalformedResponse("the response body is not JSON") from None
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(content, list):
        raise MalformedResponse("the response has no content list")
    parts = [b["text"] for b in content
             if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    if not parts:
        raise AnswerRejected("the reply has no text")
    return "".join(parts)


def cacheable(value: Any) -> Any:
    """The validated value as JSON data (a validator's dataclass becomes its fields): all the cache keeps."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def describe_error(exc: BaseException) -> str:
    """One line for the SDK's exception types without importing them at module load."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if isinstance(exc, DeadlineExceeded):
        return "the LLM call timed out (the KAOS_LLM_TIMEOUT_S deadline passed)"
    if "Timeout" in name:
        return "the LLM call timed out"
    if status is not None:
        return f"the LLM API answered HTTP {status}"
    if "Connection" in name:
        return "could not connect to the LLM API"
    return f"the LLM call failed ({name})"
