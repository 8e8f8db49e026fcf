"""`kaos hook SHAPE`: one hook call, from stdin bytes to an exit code, never breaking the agent.

The contract with the harness: exit 0 whenever the event is applied or safely spooled, and on any
internal error (one line on stderr says what happened); exit 1 with one line when the input itself is
bad (not JSON, no session id, a field of the wrong type): that is the only case where retrying
cannot help, and harnesses treat 1 as a non-blocking error. Nothing here raises.

Cost per event: the library is opened with a short busy timeout (``--wait-ms``, default 250) and
the LLM off (a hook never waits on a model), and this module is reached from ``kaos_dream.entry``
without importing the command-line tree.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import sys
import time
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import KaosError, StoreError
from .events import (
    MAX_EVENT_BYTES,
    HarnessEvent,
    from_claude_code,
    from_jsonl,
    parse_object,
    stdin_text,
    transcript_usage,
)
from .spool import Spool, default_base

if TYPE_CHECKING:
    from ..library import Library

SHAPES = ("claude-code", "jsonl")
DEFAULT_WAIT_MS = 250
MAX_LINES = 10_000


def parse(shape: str, data: bytes, received: float) -> list[HarnessEvent]:
    """The events on stdin, all checked before any is applied (InvalidInputError names the line)."""
    if shape == "claude-code":
        event = from_claude_code(parse_object(data), received, uuid.uuid4().hex)
        return [_with_transcript_tokens(event)]
    if shape != "jsonl":
        raise KaosError(f"unknown hook shape {shape!r}: use {' or '.join(SHAPES)}")
    text = stdin_text(data, "the hook events")
    events = []
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise KaosError("no hook event on stdin (one JSON object a line expected)")
    if len(lines) > MAX_LINES:
        raise KaosError(f"at most {MAX_LINES} events a call, got {len(lines)}")
    for number, line in lines:
        try:
            events.append(from_jsonl(parse_object(line), received))
        except KaosError as exc:
            raise KaosError(f"line {number}: {exc}") from None
    return events


def _with_transcript_tokens(event: HarnessEvent) -> HarnessEvent:
    """A stop or session end with the transcript's token totals read now (a replay may come later)."""
    if event.transcript is None:
        return event
    usage = transcript_usage(event.transcript) if event.kind in ("stop", "session_end") else None
    tokens_in, tokens_out = usage if usage is not None else (None, None)
    return dataclasses.replace(event, transcript=None, tokens_in=tokens_in, tokens_out=tokens_out)


def _retryable(exc: BaseException) -> bool:
    """A failure that a later replay can get past (locked, unreachable, a bug), unlike bad input."""
    return not isinstance(exc, KaosError) or isinstance(exc, StoreError)


def _say(text: str) -> None:
    line = " ".join(text.split())[:500]
    sys.stderr.write(f"kaos: hook: {line}\n")
    sys.stderr.flush()


def open_library(db: str, wait_ms: int | None) -> Library:
    """The library with the LLM off and, for a hook, a short busy timeout (None: the configured one)."""
    from ..library import Library
    from ..settings import Settings

    settings = Settings.from_env()
    settings = dataclasses.replace(settings, busy_timeout_ms=settings.busy_timeout_ms if wait_ms is None else wait_ms,
                                   llm=False)
    return Library(db, settings=settings)


def replay(lib: Library, spool: Spool) -> tuple[int, int, int]:
    """Apply the spool's events in order (call under the apply lock): (applied, duplicates, rejected).
    A retryable failure propagates and leaves the unapplied rest claimed for the next replay."""
    from .apply import apply_event

    applied = duplicates = rejected = 0
    # An unfinished earlier claim first, then what was appended since: two rounds empty the spool as
    # it was when the replay began (a third takes what arrived meanwhile, if anything).
    for _ in range(3):
        if not spool.pending():
            break
        for line in spool.claim():
            try:
                event = HarnessEvent.from_json(line)
            except (ValueError, TypeError, KaosError) as exc:
                spool.reject(line, f"not a spooled event: {exc}")
                rejected += 1
                continue
            try:
                if apply_event(lib, event):
                    applied += 1
                else:
                    duplicates += 1
            except Exception as exc:
                if _retryable(exc):
                    raise
                spool.reject(line, str(exc))
                rejected += 1
        spool.done()
    return applied, duplicates, rejected


def _spool(spool: Spool, events: Iterable[HarnessEvent], why: str) -> int:
    events = list(events)
    if not events:
        return 0
    try:
        spool.append([e.to_json() for e in events])
    except OSError as exc:
        _say(f"{why}; could not spool the event either ({exc.strerror or exc}): it is lost")
        return 0
    _say(f"{why}; {len(events)} event(s) spooled to {spool.path} for the next call to apply")
    return 0


def read_stdin() -> bytes:
    """Stdin up to one byte past the cap (enough to say it is too large without reading it all)."""
    return sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)


def handle(shape: str, data: bytes, db: str, *, spool_base: str | None = None,
           wait_ms: int = DEFAULT_WAIT_MS) -> int:
    """One hook call: the exit code (0 applied or spooled or internal error, 1 bad input)."""
    received = time.time()
    try:
        events = parse(shape, data, received)
    except KaosError as exc:
        _say(str(exc))
        return 1
    except Exception as exc:  # a bug in parsing: the agent goes on
        _say(f"internal error reading the event: {type(exc).__name__}: {exc}")
        return 0
    spool = Spool(spool_base or default_base(db))
    try:
        return _deliver(spool, events, db, wait_ms)
    except Exception as exc:  # the last line of defence: never a traceback into the agent
        return _spool(spool, events, f"internal error: {type(exc).__name__}: {exc}")


def _deliver(spool: Spool, events: list[HarnessEvent], db: str, wait_ms: int) -> int:
    from .apply import apply_event

    with spool.apply_lock(wait_ms / 1000.0) as held:
        if not held:
            return _spool(spool, events, "another hook is applying events")
        try:
            lib = open_library(db, wait_ms)
        except Exception as exc:
            if not _retryable(exc):
                _say(str(exc))
                return 1
            return _spool(spool, events, f"library unavailable ({_reason(exc)})")
        try:
            if spool.pending():
                try:
                    replay(lib, spool)
                except Exception as exc:
                    return _spool(spool, events, f"library busy ({_reason(exc)})")
            for n, event in enumerate(events):
                try:
                    apply_event(lib, event)
                except Exception as exc:
                    if _retryable(exc):
                        return _spool(spool, events[n:], f"library busy ({_reason(exc)})")
                    _say(f"event {event.event_id} refused: {exc}")
                    spool.reject(event.to_json(), str(exc))
        finally:
            lib.close()
    return 0


def _reason(exc: BaseException) -> str:
    if isinstance(exc, sqlite3.OperationalError | KaosError):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")


def replay_command(db: str, spool_base: str | None = None, wait_s: float = 10.0) -> dict[str, int | str]:
    """`kaos hook replay` and the dream: apply what the spool holds now (raises when it cannot)."""
    spool = Spool(spool_base or default_base(db))
    if not spool.pending():
        return {"applied": 0, "duplicates": 0, "rejected": 0, "spool": spool.path}
    with spool.apply_lock(wait_s) as held:
        if not held:
            raise StoreError(f"another process is applying hook events ({spool.lock_path}); try again")
        lib = open_library(db, None)
        try:
            applied, duplicates, rejected = replay(lib, spool)
        finally:
            lib.close()
    return {"applied": applied, "duplicates": duplicates, "rejected": rejected, "spool": spool.path}
