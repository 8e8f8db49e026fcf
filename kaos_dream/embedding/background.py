"""Running heavy, optional work at the lowest CPU priority, so that the processes writing the library
keep the CPU.

The dream's strong-tier backfill embeds hundreds of rows with a transformer: seconds of CPU on one
core. On a small machine that CPU came from the agents writing beside it, and a writer descheduled
while it held the write lock made every other writer wait for it (issue 33 item 13: back-to-back
writers ran past their busy timeout although no transaction of the dream held the lock 0.2 s). The
work runs in a thread of its own whose scheduling priority is lowered to the lowest (Linux lets a
thread lower its own priority; elsewhere it runs at the caller's). A thread, not the process: an
unprivileged process cannot raise its priority again, and the dream's transactions must not run at
the lowest priority (a low-priority lock holder would make the writers wait instead).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
LOWEST = 19  # the highest nice value: runs only on CPU no other runnable process wants


def lower_this_thread() -> bool:
    """Lower the calling thread's CPU priority to :data:`LOWEST`; False where that is not possible."""
    if not sys.platform.startswith("linux") or not hasattr(os, "setpriority"):
        return False
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWEST)
    except OSError:
        return False
    return True


def at_lowest_priority(work: Callable[[], T]) -> T:
    """``work()`` in a fresh thread at the lowest CPU priority; its result, or its exception re-raised.
    The caller waits (numpy and the tokenizer release the GIL, so the wait costs no CPU)."""
    box: dict[str, object] = {}

    def body() -> None:
        lower_this_thread()
        try:
            box["result"] = work()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=body, name="kaos-background", daemon=True)
    thread.start()
    thread.join()  # an interrupt here propagates; the daemon thread ends with the process
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]
