"""`kaos mcp serve`: run the library as an MCP server on stdin/stdout (needs the ``mcp`` extra)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import KaosError
from .common import DbOption, global_options, resolve_db

app = typer.Typer(help="Serve the library to agents over the Model Context Protocol.", no_args_is_help=True)

INSTALL_HINT = 'the MCP server needs the optional mcp package: pip install "kaos-dream[mcp]"'


@app.command("serve")
def serve(
    ctx: typer.Context,
    agent: Annotated[list[str] | None, typer.Option("--agent", help="An existing episode this server may act on "
                                                    "besides those it starts (repeat; also KAOS_MCP_AGENTS).")]
    = None,
    db: DbOption = None,
    principal: Annotated[str | None, typer.Option(
        "--principal", help="The identity every episode this server opens is counted as (default "
        "$KAOS_PRINCIPAL, else user@host): however many episodes its client starts, it is one vote "
        "in the dream's prune and promotion rules.", show_default=False)] = None,
) -> None:
    """Serve MCP tools over stdio until the client disconnects (stdout carries the protocol).

    The server acts only on the episodes it starts (agent_start) and those named with --agent.
    Give each client its own --principal: the dream counts principals, not episodes.

    Example: kaos mcp serve --db /srv/agents/kaos.db --principal etl-bot --agent nightly-etl
    """
    try:
        from ..mcp_server import serve as run_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in ("mcp", "mcp_types", "pydantic"):
            raise KaosError(INSTALL_HINT) from None
        raise
    who = principal if principal is not None else global_options(ctx).principal
    run_server(resolve_db(ctx, db), agent or [], who)
