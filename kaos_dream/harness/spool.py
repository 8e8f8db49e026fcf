"""The hook spool: events a hook could not write yet, kept in a local file until a later call replays them.

A hook must never hold up its agent, so when the library is locked past the hook's short wait, or
unreachable, the event is appended here instead, and the next hook call (``kaos hook``, ``kaos hook
replay`` or ``kaos dream run``) applies it. Files, next to the library by default (``BASE`` is
``<library file>.hook-spool``; ``$KAOS_HOOK_SPOOL`` or ``--spool`` name another):

* ``BASE.jsonl``: appended events, one JSON line each, written by one ``write`` call under an
  exclusive ``flock`` (so concurrent hooks never interleave, and a killed hook leaves whole lines).
* ``BASE.lock``: held (``flock``) by the one hook process that applies events at a time. Replaying
  and then applying its own event under it keeps a session's events in the order they arrived.
* ``BASE.claimed``: what a replay took: the ``.jsonl`` file renamed under its lock, so appends made
  during the replay go to a fresh file. It is deleted only after every event in it was applied; a
  replay killed half-way leaves it for the next one, whose already-applied events then change
  nothing (their ids are in ``hook_events``).
* ``BASE.rejected``: lines that can never apply (a torn line, an event the library refuses), with
  the reason: kept for a person, never dropped silently.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

SPOOL_ENV = "KAOS_HOOK_SPOOL"


def default_base(db: str) -> str:
    """Where a library's spool lives: beside its file, or (for a server URL) in the user's cache."""
    override = os.environ.get(SPOOL_ENV, "").strip()
    if override:
        return override
    if "://" in db:
        import hashlib  # here: a file's spool (every hook call, `dream run --if-due`) needs no digest

        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kaos-dream"
        return str(cache / f"hook-spool-{hashlib.sha256(db.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}")
    return f"{db}.hook-spool"


class Spool:
    def __init__(self, base: str) -> None:
        self.base = base
        self.path = f"{base}.jsonl"
        self.claimed = f"{base}.claimed"
        self.lock_path = f"{base}.lock"
        self.rejected = f"{base}.rejected"

    def _ensure_dir(self) -> None:
        parent = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(parent, exist_ok=True)

    def append(self, lines: list[str]) -> None:
        """Append whole lines (one ``write``), under the file's lock, to the file now at the path."""
        data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")
        self._ensure_dir()
        while True:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    current = os.stat(self.path)
                except FileNotFoundError:
                    continue  # claimed (renamed) while this process waited for the lock: open the new one
                opened = os.fstat(fd)
                if (opened.st_ino, opened.st_dev) != (current.st_ino, current.st_dev):
                    continue
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                return
            finally:
                os.close(fd)

    def pending(self) -> bool:
        """Anything to replay (a cheap stat, done by every hook call)."""
        if os.path.exists(self.claimed):
            return True
        try:
            return os.stat(self.path).st_size > 0
        except FileNotFoundError:
            return False

    @contextlib.contextmanager
    def apply_lock(self, wait_s: float) -> Iterator[bool]:
        """Hold the apply lock, waiting at most ``wait_s``; yields False when it could not be had."""
        self._ensure_dir()
        fd = os.open(self.lock_path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                        yield False
                        return
                    time.sleep(0.005)
            yield True
        finally:
            os.close(fd)

    def claim(self) -> list[str]:
        """The lines to replay, oldest first (call under the apply lock): an earlier, unfinished claim
        first, else the appended file renamed away under its lock."""
        if not os.path.exists(self.claimed) and os.path.exists(self.path):
            fd = os.open(self.path, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                with contextlib.suppress(FileNotFoundError):
                    os.rename(self.path, self.claimed)
            finally:
                os.close(fd)
        try:
            with open(self.claimed, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            return []
        text = data.decode("utf-8", "surrogateescape")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines

    def done(self) -> None:
        """Every claimed line was applied (or rejected): forget the claim."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.claimed)

    def reject(self, line: str, reason: str) -> None:
        """Keep a line that can never apply, with why, for a person to look at."""
        self._ensure_dir()
        record = json.dumps({"reason": reason, "line": line}, ensure_ascii=False) + "\n"
        fd = os.open(self.rejected, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, record.encode("utf-8", "surrogatepass"))
        finally:
            os.close(fd)
