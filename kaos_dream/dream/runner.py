"""Running a dream pass: the lease, the phases in order (each timed, each committed with its record),
resuming an interrupted apply run, and the run record with its summary and digest."""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..clock import MAX_TIMESTAMP, MIN_TIMESTAMP, iso, representable
from ..due import not_due_message
from ..errors import InvalidInputError, StoreFaultError
from ..store import lock_trace, transaction
from ..store.connect import connection_path, describe_sqlite_error
from . import state
from .phases import DreamContext, phases_for

if TYPE_CHECKING:
    from .host import DreamHost

Progress = Callable[[str, int, int], None]  # (phase name, position, total) before each phase


@dataclass
class RunOutcome:
    """What `dream run` reports: ``status`` is completed, busy (lease held) or not-due."""

    status: str
    run_id: int | None = None
    mode: str | None = None
    resumed: bool = False
    holder: str | None = None
    lease_expires_at: float | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    digest: str | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "run_id": self.run_id, "mode": self.mode, "resumed": self.resumed,
                "holder": self.holder, "lease_expires_at": self.lease_expires_at, "message": self.message,
                "summary": self.summary}


def check_since(since: float | None) -> None:
    """The window start is stored on the run and shown in its digest, so it must be a time we can show:
    refused here, before the lease or any row is written (``nan`` would silently replay nothing)."""
    if since is None:
        return
    if isinstance(since, bool) or not isinstance(since, (int, float)) or not representable(float(since)):
        raise InvalidInputError(f"since must be epoch seconds between {MIN_TIMESTAMP:.0f} ({iso(MIN_TIMESTAMP)}) "
                                f"and {MAX_TIMESTAMP:.0f} ({iso(MAX_TIMESTAMP)}), got {since!r}")


def check_wait(wait: float) -> None:
    """Seconds to wait for the lease: finite and not negative (``nan`` would make the wait loop spin forever)."""
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not math.isfinite(wait) or wait < 0:
        raise InvalidInputError(f"wait must be a finite, non-negative number of seconds, got {wait!r}")


def _acquire(lib: DreamHost, holder: str, wait: float) -> state.LeaseInfo | None:
    deadline = time.monotonic() + max(0.0, wait)
    while True:
        blocker = state.try_acquire(lib.conn, holder, lib.now(), lib.settings.dream_lease_s)
        if blocker is None or time.monotonic() >= deadline:
            return blocker
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))


def _not_due(lib: DreamHost, mode: str) -> RunOutcome | None:
    """An applying pass is due after N episodes since the last *applied* pass (the automatic dry runs
    in between do not count); a dry run after N since the last pass of any kind."""
    due, _ = state.completed_since_marker(lib.conn, state.mark_for(mode))
    if due >= lib.settings.dream_threshold:
        return None
    return RunOutcome("not-due", message=not_due_message(due, mode, lib.settings.dream_threshold))


def default_since(conn: sqlite3.Connection, mode: str) -> float:
    """Where a pass's window starts: an applying pass acts on everything since the last *applied*
    pass (the dry runs in between changed nothing), so its window — and its digest — starts there;
    a dry run reports what happened since the last pass of any kind."""
    only_applied = " AND mode = 'apply'" if mode == "apply" else ""
    last = conn.execute(
        "SELECT max(started_at) FROM dream_runs WHERE status = 'completed' AND kind = 'run'" + only_applied
    ).fetchone()[0]
    return float(last) if last is not None else 0.0


def _start_or_resume(lib: DreamHost, holder: str, kind: str, mode: str, trigger: str,
                     since: float | None) -> tuple[int, bool]:
    """Inside the lease: discard interrupted dry runs, resume an interrupted apply run, or start."""
    conn, now = lib.conn, lib.now()
    with transaction(conn):
        for row in conn.execute("SELECT id, mode FROM dream_runs WHERE status = 'running' ORDER BY id").fetchall():
            if row["mode"] == "apply":
                conn.execute("UPDATE dream_runs SET holder = ? WHERE id = ?", (holder, row["id"]))
                state.renew(conn, holder, now, lib.settings.dream_lease_s, row["id"])
                return int(row["id"]), True
            conn.execute(
                "UPDATE dream_runs SET status = 'abandoned', finished_at = ?, "
                "error = 'interrupted; discarded (a dry run changes nothing but proposals)' WHERE id = ?",
                (now, row["id"]),
            )
        if since is None:
            since = default_since(conn, mode)
        state.advance_marker(conn, state.MARKS if mode == "apply" else (state.ANY_PASS,))
        cur = conn.execute(
            "INSERT INTO dream_runs (kind, mode, trigger, status, holder, since, cycle, started_at) "
            "VALUES (?, ?, ?, 'running', ?, ?, ?, ?)",
            (kind, mode, trigger, holder, since, state.current_cycle(conn), now),
        )
        run_id = int(cur.lastrowid)
        state.renew(conn, holder, now, lib.settings.dream_lease_s, run_id)
    return run_id, False


def run_dream(
    lib: DreamHost,
    *,
    mode: str = "dry-run",
    kind: str = "run",
    trigger: str = "manual",
    since: float | None = None,
    wait: float = 0.0,
    if_due: bool = False,
    progress: Progress | None = None,
) -> RunOutcome:
    """Run one dream pass (or finish an interrupted one). Never raises for a held lease: reports it."""
    if mode not in ("dry-run", "apply"):
        raise InvalidInputError(f"unknown dream mode {mode!r}: use dry-run or apply")
    if trigger not in ("manual", "auto", "cron"):
        raise InvalidInputError(f"unknown trigger {trigger!r}")
    check_since(since)
    check_wait(wait)
    if if_due and (not_due := _not_due(lib, mode)) is not None:
        return not_due
    holder = state.new_holder()
    with lock_trace.labelled("dream:lease"):
        blocker = _acquire(lib, holder, wait)
    if blocker is not None:
        return RunOutcome("busy", holder=blocker.holder, lease_expires_at=blocker.expires_at,
                          run_id=blocker.run_id,
                          message=f"another dream run holds the lease: {blocker.holder}"
                                  + (f" (run {blocker.run_id})" if blocker.run_id else ""))
    if if_due and (not_due := _not_due(lib, mode)) is not None:  # re-check under the lease: a pass may just have run
        with transaction(lib.conn):
            state.release(lib.conn, holder)
        return not_due
    run_id: int | None = None
    try:
        with lock_trace.labelled("dream:start"):
            run_id, resumed = _start_or_resume(lib, holder, kind, mode, trigger, since)
        with lock_trace.labelled("dream:finish"):
            return _execute(lib, holder, run_id, resumed, progress)
    except StoreFaultError as fault:
        if run_id is None:
            _fail(lib, holder, run_id, fault)
            raise
        raise _suspend(lib, holder, run_id, fault) from fault
    except BaseException as exc:
        _fail(lib, holder, run_id, exc)
        raise


def _suspend(lib: DreamHost, holder: str, run_id: int, fault: StoreFaultError) -> StoreFaultError:
    """A storage fault (disk full, I/O error, lock timeout) stopped the run between phases. The phases
    already committed stay committed, so the run is left ``running`` for the next pass to resume
    (marking it failed would make that pass start over and replay them again); the lease is released
    so that pass need not wait for it to expire. Returns the error to raise: it says what committed."""
    conn = lib.conn
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
    done = [r[0] for r in conn.execute(
        "SELECT phase FROM dream_run_phases WHERE run_id = ? ORDER BY position, phase", (run_id,))]
    mode = conn.execute("SELECT mode FROM dream_runs WHERE id = ?", (run_id,)).fetchone()[0]
    remaining = [p.name for p in phases_for(
        conn.execute("SELECT kind FROM dream_runs WHERE id = ?", (run_id,)).fetchone()[0]) if p.name not in done]
    cause = fault.__cause__ if isinstance(fault.__cause__, sqlite3.Error) else fault
    path = connection_path(conn)
    note = describe_sqlite_error(cause, path, written="stopped between phases; the next pass resumes it")
    released = _release_after_fault(lib, holder, run_id, note[:500])
    committed = (f"phases {', '.join(done)} of dream run {run_id} were committed and are kept" if done
                 else f"dream run {run_id} had committed no phase yet")
    if mode == "apply":
        resumes = f"the next `kaos dream run --apply` resumes it from {remaining[0] if remaining else 'its end'}"
    else:
        resumes = "the next pass discards this dry run and starts over (a dry run changes nothing but proposals)"
    lease = ("the lease is released" if released else
             "the lease could not be released (nothing can be written); it lapses once this process has ended")
    written = f"{committed}; {resumes}; {lease}"
    message = describe_sqlite_error(cause, path, written=written)
    if written not in message:  # faults whose description has no "what was written" part (locked, corrupt)
        message = f"{message} ({written})"
    suspended = StoreFaultError(message)
    suspended.kind = fault.kind
    return suspended


def _release_after_fault(lib: DreamHost, holder: str, run_id: int, error: str) -> bool:
    """Free the lease and note the error on the run, smallest write last: on a full disk the note may
    not fit, and a DELETE needs no new page."""
    conn = lib.conn
    for note in (True, False):
        try:
            with transaction(conn):
                if note:
                    conn.execute("UPDATE dream_runs SET error = ? WHERE id = ? AND status = 'running'",
                                 (error, run_id))
                state.release(conn, holder)
            return True
        except sqlite3.Error:
            continue
    return False


def _heartbeat(lib: DreamHost, holder: str, run_id: int) -> Callable[[], None]:
    """Renew the lease, at most once a tenth of its length: for a phase's long prepare step."""
    every = lib.settings.dream_lease_s / 10.0
    last = [time.monotonic()]

    def beat() -> None:
        if time.monotonic() - last[0] < every:
            return
        with transaction(lib.conn):
            state.renew(lib.conn, holder, lib.now(), lib.settings.dream_lease_s, run_id)
        last[0] = time.monotonic()

    return beat


def _no_yield() -> None:
    """``ctx.yield_lock`` outside a phase's transaction: nothing to yield."""


def _execute(lib: DreamHost, holder: str, run_id: int, resumed: bool, progress: Progress | None) -> RunOutcome:
    conn = lib.conn
    run = conn.execute("SELECT * FROM dream_runs WHERE id = ?", (run_id,)).fetchone()
    ctx = DreamContext(lib=lib, run_id=run_id, kind=run["kind"], mode=run["mode"], trigger=run["trigger"],
                       since=run["since"], started_at=run["started_at"], cycle=state.current_cycle(conn),
                       heartbeat=_heartbeat(lib, holder, run_id))
    done = {r["phase"]: r for r in conn.execute("SELECT * FROM dream_run_phases WHERE run_id = ?", (run_id,))}
    phases = phases_for(ctx.kind)
    timings: dict[str, float] = {}
    for position, phase in enumerate(phases):
        if phase.name in done:
            row = done[phase.name]
            ctx.results[phase.name] = json.loads(row["summary"])
            if row["digest"] and phase.name != "digest":
                ctx.digests[phase.name] = row["digest"]
            timings[phase.name] = row["duration_ms"]
            continue
        if progress is not None:
            progress(phase.name, position, len(phases))
        t0 = time.perf_counter()
        started = lib.now()
        with lock_trace.labelled(f"dream:{phase.name}:prepare"):
            prepared = phase.prepare(ctx) if phase.prepare is not None else None
        tx = transaction(conn)
        with lock_trace.labelled(f"dream:{phase.name}"), tx:
            state.renew(conn, holder, lib.now(), lib.settings.dream_lease_s, run_id)
            ctx.yield_lock = tx.cycle
            try:
                result = phase.run(ctx, prepared)
            finally:
                ctx.yield_lock = _no_yield
            elapsed = (time.perf_counter() - t0) * 1000.0
            conn.execute(
                "INSERT INTO dream_run_phases (run_id, phase, position, started_at, duration_ms, summary, digest) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, phase.name, position, started, elapsed, json.dumps(result.summary, sort_keys=True),
                 result.digest),
            )
        ctx.results[phase.name] = result.summary
        if result.digest and phase.name != "digest":
            ctx.digests[phase.name] = result.digest
        timings[phase.name] = elapsed
    if progress is not None:
        progress("done", len(phases), len(phases))
    digest_row = conn.execute(
        "SELECT digest FROM dream_run_phases WHERE run_id = ? AND phase = 'digest'", (run_id,)
    ).fetchone()
    digest = digest_row[0] if digest_row else None
    total_ms = round(sum(timings.values()), 3)
    summary = {
        "run_id": run_id, "kind": ctx.kind, "mode": ctx.mode, "trigger": ctx.trigger, "resumed": resumed,
        "cycle": ctx.cycle, "timings_ms": {k: round(v, 3) for k, v in timings.items()}, "total_ms": total_ms,
        "phases": ctx.results,
    }
    with transaction(conn):
        now = lib.now()
        conn.execute(
            "UPDATE dream_runs SET status = 'completed', finished_at = ?, duration_ms = ?, summary = ?, digest = ?, "
            "cycle = ? WHERE id = ?",
            (now, total_ms, json.dumps(summary, sort_keys=True), digest, ctx.cycle, run_id),
        )
        state.release(conn, holder)
    message = f"dream run {run_id} ({ctx.mode}) completed" + (" (resumed after an interruption)" if resumed else "")
    return RunOutcome("completed", run_id=run_id, mode=ctx.mode, resumed=resumed, summary=summary, digest=digest,
                      message=message)


def _fail(lib: DreamHost, holder: str, run_id: int | None, exc: BaseException) -> None:
    """An error (not a crash) ends the run as failed and frees the lease; committed phases stay."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)) and run_id is not None:
        # Interrupted by the user: leave the run 'running' so the next run resumes it; free the lease.
        try:
            with transaction(lib.conn):
                state.release(lib.conn, holder)
        except Exception:  # the lease will expire on its own
            pass
        return
    try:
        if lib.conn.in_transaction:
            lib.conn.execute("ROLLBACK")
        with transaction(lib.conn):
            if run_id is not None:
                lib.conn.execute(
                    "UPDATE dream_runs SET status = 'failed', finished_at = ?, error = ? WHERE id = ? "
                    "AND status = 'running'",
                    (lib.now(), f"{type(exc).__name__}: {exc}"[:2000], run_id),
                )
            state.release(lib.conn, holder)
    except Exception:  # the lease expires by itself; the original error is what matters
        pass
