"""Hook events from an agent harness, in the library's terms.

Two input shapes become one :class:`HarnessEvent`:

* ``claude-code``: one hook event as Claude Code writes it on the hook command's stdin
  (``hook_event_name``, ``session_id``, ``transcript_path``, and for tool events ``tool_name``,
  ``tool_input``, ``tool_response`` / ``error`` and ``tool_use_id``).
* ``jsonl``: the neutral shape any other harness can write, one JSON object a line (docs/cli.md,
  "kaos hook"): ``{"session": …, "type": "session_start" | "tool" | "skill" | "usage" |
  "session_end", "event_id": …, …}``.

Everything here is pure: no clock (the receipt time is passed in), no library. Agents and harnesses
are untrusted, so every field is type-checked and capped.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InvalidInputError

KINDS = ("session_start", "tool", "skill", "usage", "stop", "session_end", "ignored")
END_OUTCOMES = ("completed", "failed", "killed")
MAX_EVENT_BYTES = 16 * 1024 * 1024  # what a hook reads from stdin (a tool response can be large)
MAX_ID = 200
MAX_ERROR_CHARS = 20_000  # the failure record keeps a bounded sample and the full text's hash anyway
MAX_TEXT = 2000
MAX_TOKENS = 10**12
# Claude Code's tool that loads a skill: its input names the skill.
CLAUDE_SKILL_TOOL = "Skill"


@dataclass(frozen=True)
class HarnessEvent:
    """One event: ``session`` is the episode (agent) id, ``at`` when the hook received it."""

    event_id: str
    session: str
    kind: str
    at: float
    name: str | None = None  # session_start: a label for people
    tool: str | None = None  # tool: the tool's name
    failed: bool = False  # tool: the tool reported an error; skill: the skill did not work
    error: str | None = None  # tool: the error text (a failure record)
    skill: str | None = None  # skill: the skill the harness invoked
    success: bool | None = None  # skill: an explicit verdict (None: decided by how the session ends)
    task: str | None = None  # skill: the task it was applied to
    outcome: str | None = None  # session_end: completed / failed / killed (None: from the session's tools)
    tokens_in: int | None = None
    tokens_out: int | None = None
    tool_calls: int | None = None  # usage / session_end: a harness's own count (else counted from events)
    transcript: str | None = None  # claude-code stop / session_end: where its token usage can be read

    def to_json(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None and v is not False},
                          ensure_ascii=False, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> HarnessEvent:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise InvalidInputError("a spooled event is a JSON object")
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def stdin_text(data: bytes, what: str = "the hook event") -> str:
    """Stdin's bytes as text, or InvalidInputError when they are too many or not UTF-8."""
    if len(data) > MAX_EVENT_BYTES:
        raise InvalidInputError(f"{what} is larger than {MAX_EVENT_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{what} is not UTF-8 text") from None


def parse_object(text: str | bytes) -> dict[str, Any]:
    """One JSON object, or InvalidInputError in one line."""
    if isinstance(text, bytes):
        text = stdin_text(text)
    if not text.strip():
        raise InvalidInputError("no hook event on stdin (one JSON object expected)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"the hook event is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") \
            from None
    except RecursionError:
        raise InvalidInputError("the hook event is nested too deeply") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"the hook event must be a JSON object, got {type(data).__name__}")
    return data


def _text(data: Mapping[str, Any], key: str, cap: int = MAX_TEXT, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise InvalidInputError(f"the hook event has no {key}")
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{key} must be a string")
    value = value.strip()
    if not value:
        if required:
            raise InvalidInputError(f"the hook event's {key} is empty")
        return None
    return value[:cap]


def _count(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise InvalidInputError(f"{key} must be a whole number from 0 to {MAX_TOKENS}")
    return value


def _session(data: Mapping[str, Any], key: str) -> str:
    session = _text(data, key, cap=10_000, required=True)
    assert session is not None
    if len(session) > MAX_ID:
        raise InvalidInputError(f"{key} is longer than {MAX_ID} characters")
    return session


def payload_digest(data: Mapping[str, Any]) -> str:
    """A stable id for an event that carries none: the same payload gives the same id."""
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _response_error(response: Any) -> str | None:
    """The error a tool response reports, if it reports one: ``is_error`` / ``isError`` true, or a
    non-empty ``error`` string (as Claude Code's tools and MCP tools shape their results)."""
    if not isinstance(response, dict):
        return None
    flagged = response.get("is_error") is True or response.get("isError") is True
    error = response.get("error")
    if isinstance(error, str) and error.strip():
        return error
    if flagged:
        for key in ("stderr", "content", "message", "output"):
            value = response.get(key)
            if isinstance(value, str) and value.strip():
                return value
            if isinstance(value, list):  # MCP content blocks
                texts = [b.get("text") for b in value if isinstance(b, dict) and isinstance(b.get("text"), str)]
                if texts:
                    return "\n".join(texts)
        return "the tool reported an error"
    return None


def _skill_name(tool_input: Any) -> str | None:
    if not isinstance(tool_input, dict):
        return None
    for key in ("skill", "name", "command"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:MAX_TEXT]
    return None


def from_claude_code(data: Mapping[str, Any], at: float, nonce: str) -> HarnessEvent:
    """A Claude Code hook event. ``nonce`` makes the id of an event that carries no id of its own
    (``Stop``, an ignored event) unique to this delivery."""
    name = _text(data, "hook_event_name", required=True)
    session = _session(data, "session_id")
    transcript = _text(data, "transcript_path", cap=4096)
    base = f"cc:{session}:{name}"
    if name == "SessionStart":
        return HarnessEvent(f"{base}:{_text(data, 'source', 64) or 'startup'}:{nonce}", session, "session_start", at)
    if name == "SessionEnd":
        return HarnessEvent(f"{base}", session, "session_end", at, transcript=transcript)
    if name in ("PostToolUse", "PostToolUseFailure"):
        tool = _text(data, "tool_name", required=True)
        tool_use = _text(data, "tool_use_id", MAX_ID)
        event_id = f"{base}:{tool_use}" if tool_use else f"{base}:{payload_digest(data)}"
        error = None
        if name == "PostToolUseFailure":
            error = data.get("error") if isinstance(data.get("error"), str) else None
            error = (error or "").strip() or "the tool failed"
        else:
            error = _response_error(data.get("tool_response"))
        skill = _skill_name(data.get("tool_input")) if tool == CLAUDE_SKILL_TOOL else None
        return HarnessEvent(event_id[:MAX_ID * 2], session, "tool", at, tool=tool, failed=error is not None,
                            error=None if error is None else error[:MAX_ERROR_CHARS], skill=skill)
    if name == "Stop":
        return HarnessEvent(f"{base}:{nonce}", session, "stop", at, transcript=transcript)
    return HarnessEvent(f"{base}:{nonce}", session, "ignored", at)


def _at(data: Mapping[str, Any], received: float) -> float:
    value = data.get("at")
    if value is None:
        return received
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise InvalidInputError("at must be epoch seconds")
    return float(value)


def from_jsonl(data: Mapping[str, Any], at: float) -> HarnessEvent:
    """An event in the neutral shape (docs/cli.md, "kaos hook")."""
    kind = _text(data, "type", 32, required=True)
    if kind not in KINDS or kind in ("ignored", "stop"):
        raise InvalidInputError(f"type {kind!r} must be session_start, tool, skill, usage or session_end")
    session = _session(data, "session")
    given = _text(data, "event_id", 10_000)
    if given is not None and len(given) > MAX_ID:
        raise InvalidInputError(f"event_id is longer than {MAX_ID} characters")
    event_id = f"j:{given}" if given else f"j:{payload_digest(data)}"
    when = _at(data, at)
    usage = {"tokens_in": _count(data, "tokens_in"), "tokens_out": _count(data, "tokens_out"),
             "tool_calls": _count(data, "tool_calls")}
    ok = data.get("ok")
    if ok is not None and not isinstance(ok, bool):
        raise InvalidInputError("ok must be true or false")
    if kind == "session_start":
        return HarnessEvent(event_id, session, kind, when, name=_text(data, "name"))
    if kind == "tool":
        tool = _text(data, "tool", required=True)
        error = _text(data, "error", MAX_ERROR_CHARS)
        failed = ok is False or error is not None
        return HarnessEvent(event_id, session, kind, when, tool=tool, failed=failed,
                            error=(error or "the tool failed") if failed else None)
    if kind == "skill":
        return HarnessEvent(event_id, session, kind, when, skill=_text(data, "skill", required=True),
                            success=ok, task=_text(data, "task"))
    if kind == "usage":
        return HarnessEvent(event_id, session, kind, when, **usage)
    outcome = _text(data, "outcome", 32)
    if outcome is not None and outcome not in END_OUTCOMES:
        raise InvalidInputError(f"outcome must be one of {', '.join(END_OUTCOMES)}")
    return HarnessEvent(event_id, session, kind, when, outcome=outcome, error=_text(data, "error", MAX_ERROR_CHARS),
                        tool=_text(data, "tool"), **usage)


def transcript_usage(path: str, max_bytes: int = 64 * 1024 * 1024) -> tuple[int, int] | None:
    """Input and output tokens summed over a Claude Code transcript's assistant messages (their
    ``message.usage``; cached input counts as input), or None when the file cannot be read. Each
    API message is counted once even when the transcript repeats it across content blocks."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError:
        return None
    if len(data) > max_bytes:
        return None
    seen: set[str] = set()
    tokens_in = tokens_out = 0
    for raw in data.splitlines():
        if b'"usage"' not in raw:
            continue
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        message = line.get("message") if isinstance(line, dict) else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(usage, dict):
            continue
        key = message.get("id")
        if isinstance(key, str):
            if key in seen:
                continue
            seen.add(key)
        parts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
        tokens_in += sum(p for p in parts if isinstance(p, int) and not isinstance(p, bool) and p >= 0)
        out = usage.get("output_tokens")
        tokens_out += out if isinstance(out, int) and not isinstance(out, bool) and out >= 0 else 0
    return min(tokens_in, MAX_TOKENS), min(tokens_out, MAX_TOKENS)
