"""A harness event applied to the library: once, in one transaction with its event id.

What each event means in the library's terms:

* ``session_start``: the session is an episode (an agent), registered if new.
* ``tool``: one tool call of the episode (``agents.tool_calls`` is the count of the session's tool
  events, so it holds whatever order events arrive in); a failed call's error text is a failure
  record for failure intelligence, at the time the hook received it. A call of the harness's skill
  tool is an invocation of that skill: its outcome is decided when the session ends.
* ``skill``: an explicit outcome of a skill (``ok``), or an invocation when ``ok`` is absent.
* ``usage`` / ``stop``: token and tool-call counts so far (``stop`` carries the transcript's totals).
* ``session_end``: the episode ends. Its state is the explicit ``outcome`` when given, else
  ``failed`` when the session's last tool call failed and ``completed`` otherwise. Every skill
  invoked without a verdict gets one outcome: success when the episode completed. The duration is
  the time between the session's first and last event as the hook received them.

The event id goes into ``hook_events`` in the same transaction as the event's effects, so an event
delivered again (a spool replayed after the direct write committed, a harness retrying) changes
nothing the second time.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import TYPE_CHECKING

from ..episode_cost import EpisodeCost
from ..errors import NotFoundError
from ..names import clean_agent_id
from .events import HarnessEvent

if TYPE_CHECKING:
    from ..library import Library

MAX_EVENT_ID = 200
_CLAIM_SQL = ("INSERT INTO hook_events (event_id, agent_id, kind, received_at) VALUES (?, ?, ?, ?) "
              "ON CONFLICT (event_id) DO NOTHING")
_COUNT_TOOLS_SQL = ("UPDATE agents SET tool_calls = (SELECT count(*) FROM hook_events AS h "
                    "WHERE h.agent_id = agents.id AND h.kind LIKE 'tool%') WHERE id = ?")
_SKILL_PREFIX = "skill:"


def stored_id(event_id: str) -> str:
    """The id as stored: ids longer than the column allows keep a prefix and a digest of the whole."""
    if len(event_id) <= MAX_EVENT_ID:
        return event_id
    return event_id[:150] + ":" + hashlib.sha256(event_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def apply_event(lib: Library, event: HarnessEvent) -> bool:
    """Apply ``event`` once: False when its id was applied before (nothing changes)."""
    agent = clean_agent_id(event.session)
    conn = lib.conn
    _load_before_lock(lib, event)
    with lib.transaction(warm=False):
        conn.execute("INSERT INTO agents (id, name, started_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
                     (agent, event.name, event.at))
        kind = event.kind
        if kind == "tool":
            kind = "tool-failed" if event.failed else "tool"
        if kind == "skill" and event.success is None:
            kind = "invoked"
        cur = conn.execute(_CLAIM_SQL, (stored_id(event.event_id), agent, kind, event.at))
        if cur.rowcount != 1:
            return False
        if event.kind == "session_start" and event.name:
            conn.execute("UPDATE agents SET name = coalesce(name, ?) WHERE id = ?", (event.name, agent))
        elif event.kind == "tool":
            _tool(lib, agent, event)
        elif event.kind == "skill":
            _skill(lib, agent, event)
        elif event.kind in ("usage", "stop"):
            _usage(lib, agent, event)
        elif event.kind == "session_end":
            _end(lib, agent, event)
    return True


def _load_before_lock(lib: Library, event: HarnessEvent) -> None:
    """Build (and import) the store this event writes through before the write lock is taken, not
    under it (issue 33 item 13); only that one: a hook process applies one event and should not pay
    for the search stack it never uses."""
    if (event.kind == "tool" and event.failed and event.tool) or event.kind in ("skill", "session_end"):
        lib.warm_writes()  # a failure's diagnosers; an episode end's gate and validators
    elif event.kind == "usage":
        lib.episodes  # noqa: B018


def _tool(lib: Library, agent: str, event: HarnessEvent) -> None:
    lib.conn.execute(_COUNT_TOOLS_SQL, (agent,))
    if event.failed and event.tool:
        lib.failures.record(event.tool, event.error or "the tool failed", agent, at=min(event.at, lib.now()))
    if event.skill:
        _note_invocation(lib, agent, event)


def _note_invocation(lib: Library, agent: str, event: HarnessEvent) -> None:
    """Remember that the session invoked ``event.skill`` (its outcome comes at the session's end)."""
    key = stored_id(f"{_SKILL_PREFIX}{event.event_id}")
    lib.conn.execute(_CLAIM_SQL, (key, agent, f"{_SKILL_PREFIX}{(event.skill or '')[:150]}", event.at))


def _skill(lib: Library, agent: str, event: HarnessEvent) -> None:
    assert event.skill is not None
    if event.success is None:
        _note_invocation(lib, agent, event)
        return
    with contextlib.suppress(NotFoundError):  # a skill the library does not hold: the harness's own
        lib.record_outcome(event.skill, event.success, agent=agent, task=event.task)


def _usage(lib: Library, agent: str, event: HarnessEvent) -> None:
    if event.kind == "stop":  # the transcript's totals so far replace the counts
        lib.conn.execute("UPDATE agents SET tokens_in = coalesce(?, tokens_in), tokens_out = coalesce(?, tokens_out) "
                         "WHERE id = ? AND state = 'running'", (event.tokens_in, event.tokens_out, agent))
        return
    lib.episodes.add_usage(agent, EpisodeCost(event.tokens_in, event.tokens_out, event.tool_calls))


def _end(lib: Library, agent: str, event: HarnessEvent) -> None:
    conn = lib.conn
    row = conn.execute("SELECT state FROM agents WHERE id = ?", (agent,)).fetchone()
    if row is None or row[0] != "running":
        return
    state = event.outcome
    last_failure = None
    if state is None:
        last = conn.execute("SELECT kind FROM hook_events WHERE agent_id = ? AND kind LIKE 'tool%' "
                            "ORDER BY received_at DESC, event_id DESC LIMIT 1", (agent,)).fetchone()
        state = "failed" if last is not None and last[0] == "tool-failed" else "completed"
        last_failure = state == "failed"
    invoked = sorted({str(r[0])[len(_SKILL_PREFIX):] for r in conn.execute(
        "SELECT kind FROM hook_events WHERE agent_id = ? AND kind LIKE 'skill:%'", (agent,))})
    for skill in invoked:
        try:
            lib.record_outcome(skill, state == "completed", agent=agent)
        except NotFoundError:
            continue  # not one of the library's skills
    first = conn.execute("SELECT min(received_at) FROM hook_events WHERE agent_id = ?", (agent,)).fetchone()[0]
    duration = max(0.0, event.at - float(first)) if first is not None else None
    conn.execute(_COUNT_TOOLS_SQL, (agent,))
    counted = conn.execute("SELECT tool_calls FROM agents WHERE id = ?", (agent,)).fetchone()[0]
    cost = EpisodeCost(event.tokens_in, event.tokens_out, event.tool_calls if event.tool_calls is not None else counted,
                       duration)
    conclusion = "the session's last tool call failed" if last_failure else None
    if state == "failed" and event.tool and event.error:
        lib.episodes.fail(agent, conclusion, tool=event.tool, error=event.error, cost=cost)
    else:
        lib.episodes.end(agent, state, conclusion, cost=cost)
