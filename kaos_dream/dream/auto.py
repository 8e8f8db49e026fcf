"""The automatic trigger: every KAOS_DREAM_THRESHOLD completed episodes, a dry-run pass, no daemon.

Registered as an after-episode hook (it runs after the episode-end transaction has committed, so
it never holds the completing agent's write lock); whether a pass is due is counted by an
episode-end hook inside that transaction, so a completion that is not due costs no read of its own.
The count is "completed episodes that ended after the stored marker" (an indexed range count, tens
of microseconds), not ``count % N``, so concurrent completions cannot skip or double a pass:
whoever fires moves the marker inside the lease.

Cost control: when the last pass's duration, scaled to the current library size, fits the budget
(KAOS_DREAM_AUTO_BUDGET_MS, default 20 ms) the pass runs inline; otherwise it is handed to a detached
``kaos dream run --dry-run --quiet`` process and the agent returns at once. A held lease means a pass
is already running: the hook does nothing. Any error is logged, never raised into the agent.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import TYPE_CHECKING

from .. import hooks
from ..store import transaction
from ..store.dialect import is_postgres
from .state import advance_marker, completed_since_marker, lease_holder

if TYPE_CHECKING:
    from .host import DreamHost

log = logging.getLogger("kaos_dream.dream")
_FIRST_RUN_MS_PER_SKILL = 0.1  # conservative estimate before any pass has been measured


def estimated_ms(lib: DreamHost) -> float:
    conn = lib.conn
    skills = conn.execute("SELECT max(id) FROM skills").fetchone()[0] or 0
    last = conn.execute(
        "SELECT duration_ms, json_extract(summary, '$.phases.replay.live_skills') FROM dream_runs "
        "WHERE status = 'completed' AND kind = 'run' ORDER BY id DESC LIMIT 1"
    ).fetchone()
    if last is None or last[0] is None:
        return skills * _FIRST_RUN_MS_PER_SKILL
    base = max(1, int(last[1] or 1))
    return float(last[0]) * max(1.0, skills / base)


def spawn_detached(db_path: str) -> subprocess.Popen[bytes]:
    """Start `kaos dream run --dry-run --quiet --trigger auto` in its own session; do not wait."""
    # The library goes by environment, not argv: a PostgreSQL URL may carry a password, and every
    # user of the machine can read a process's arguments.
    env = {**os.environ, "KAOS_DB": db_path}
    return subprocess.Popen(
        [sys.executable, "-m", "kaos_dream", "dream", "run", "--dry-run", "--quiet", "--trigger", "auto"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, env=env, close_fds=True,
    )


def claim(lib: DreamHost) -> bool:
    """Atomically re-check and move the marker, so one batch of episodes hands off one pass only."""
    with transaction(lib.conn):
        due, _ = completed_since_marker(lib.conn)
        if due < lib.settings.dream_threshold:
            return False
        advance_marker(lib.conn)
    return True


def maybe_dream(lib: DreamHost, *, due: bool | None = None) -> str:
    """Fire an automatic dry-run if due. Returns what happened: off | not-due | busy | inline | handed-off.

    ``due`` is the answer :func:`note_due` found inside the episode-end transaction, when known.
    "Not due" there stays true after the commit for this agent's purposes: a completion committed
    since then that made the batch due ran the same check inside its own transaction (writers are
    serialised) and fires the pass itself, so no pass is lost and no extra read is needed here.
    """
    if not lib.settings.dream_auto or lib.readonly:
        return "off"
    if due is False:
        return "not-due"
    due_count, _ = completed_since_marker(lib.conn)
    if due_count < lib.settings.dream_threshold:
        return "not-due"
    held = lease_holder(lib.conn)
    if held is not None and held.expires_at > lib.now():
        return "busy"
    if lib.path != ":memory:" and estimated_ms(lib) >= lib.settings.dream_auto_budget_ms:
        if not claim(lib):
            return "not-due"  # another agent claimed this batch first
        spawn_detached(lib.path)
        return "handed-off"
    from .runner import run_dream

    outcome = run_dream(lib, mode="dry-run", trigger="auto", if_due=True)
    return "inline" if outcome.status == "completed" else outcome.status


def _due_notes(lib: DreamHost) -> dict[str, bool]:
    notes: dict[str, bool] = lib.__dict__.setdefault("_dream_due", {})
    return notes


def note_due(lib: DreamHost, episode: hooks.EpisodeEnd, decision: hooks.GateDecision) -> None:
    """Episode-end hook: is a pass due, counted inside the episode-end transaction (which already
    holds a snapshot), so the after-commit trigger need not open a read of its own."""
    if episode.state != "completed" or lib.readonly:
        return
    if is_postgres(lib.conn):
        # Ends run side by side there (they share the write lock): two may each miss the other's
        # completion in here. Counted after the commit instead, the later of them sees both.
        return
    due, _ = completed_since_marker(lib.conn)
    _due_notes(lib)[episode.agent_id] = due >= lib.settings.dream_threshold


def after_episode(lib: DreamHost, episode: hooks.EpisodeEnd) -> None:
    due = _due_notes(lib).pop(episode.agent_id, None)
    if episode.state != "completed":
        return
    try:
        maybe_dream(lib, due=due)
    except Exception:  # an agent's completion must never fail because a dream could not start
        log.exception("automatic dream pass failed to start")


hooks.register_episode_end("dream-auto-due", note_due, order=900)
hooks.register_after_episode("dream-auto", after_episode, order=900)
