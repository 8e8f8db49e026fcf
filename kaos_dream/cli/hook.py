"""`kaos hook …`: telemetry straight from an agent harness's hooks (the logic: kaos_dream.harness).

`kaos hook claude-code` and `kaos hook jsonl` are normally answered by :mod:`kaos_dream.entry`
without this command tree (a hook runs on every tool call); these definitions give them their
``--help`` and serve the calls the fast path leaves to click.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..harness.run import DEFAULT_WAIT_MS, handle, read_stdin, replay_command
from . import output
from .common import DbOption, JsonOption, global_options, wants_json
from .libraries import resolve_db_path

app = typer.Typer(help="Telemetry from an agent harness's hooks: sessions, tool calls, skills, failures.",
                  no_args_is_help=True)

Spool = Annotated[str | None, typer.Option(
    "--spool", help="Spool base path for events the library could not take yet "
    "(default: $KAOS_HOOK_SPOOL, else the library file's name + .hook-spool).", show_default=False)]
WaitMs = Annotated[int, typer.Option(
    "--wait-ms", min=0, max=60_000, help="How long to wait for a busy library before spooling the event.")]


def _run(ctx: typer.Context, shape: str, db: str | None, spool: str | None, wait_ms: int) -> None:
    path = resolve_db_path(global_options(ctx), db)
    raise typer.Exit(handle(shape, read_stdin(), path, spool_base=spool, wait_ms=wait_ms))


@app.command("claude-code")
def claude_code(ctx: typer.Context, db: DbOption = None, spool: Spool = None,
                wait_ms: WaitMs = DEFAULT_WAIT_MS) -> None:
    """Read one Claude Code hook event (JSON on stdin) and record it: the session is an episode.

    Exit 0 when recorded or spooled (and on an internal error, with one line on stderr), 1 when the
    event is not valid. Install it for SessionStart, PostToolUse, PostToolUseFailure, Stop and
    SessionEnd (README, "Telemetry from Claude Code").

    Example: echo '{"hook_event_name": "SessionStart", "session_id": "s-1"}' | kaos hook claude-code
    """
    _run(ctx, "claude-code", db, spool, wait_ms)


@app.command("jsonl")
def jsonl(ctx: typer.Context, db: DbOption = None, spool: Spool = None,
          wait_ms: WaitMs = DEFAULT_WAIT_MS) -> None:
    """Read hook events in the neutral shape (one JSON object a line on stdin) and record them.

    Types: session_start, tool, skill, usage, session_end (docs/cli.md, "kaos hook").

    Example: echo '{"type": "tool", "session": "run-7", "event_id": "e1", "tool": "sh", "ok": true}' | kaos hook jsonl
    """
    _run(ctx, "jsonl", db, spool, wait_ms)


@app.command("replay")
def replay(ctx: typer.Context, db: DbOption = None, spool: Spool = None, json_out: JsonOption = False) -> None:
    """Apply the events spooled while the library was busy or unreachable (each exactly once).

    Example: kaos hook replay
    """
    result = replay_command(resolve_db_path(global_options(ctx), db), spool)
    if wants_json(ctx, json_out):
        output.emit_json(result)
        return
    output.message(f"applied {result['applied']} spooled events ({result['duplicates']} already applied, "
                   f"{result['rejected']} rejected) from {result['spool']}")
