"""`kaos mcp serve`: run the library as an MCP server on stdin/stdout (needs the ``mcp`` extra)."""

from __future__ import annotations

import typer

from ..errors import KaosError
from .common import DbOption, resolve_db

app = typer.Typer(help="Serve the library to agents over the Model Context Protocol.", no_args_is_help=True)

INSTALL_HINT = 'the MCP server needs the optional mcp package: pip install "kaos-dream[mcp]"'


@app.command("serve")
def serve(ctx: typer.Context, db: DbOption = None) -> None:
    """Serve MCP tools over stdio until the client disconnects (stdout carries the protocol).

    Example: kaos mcp serve --db /srv/agents/kaos.db
    """
    try:
        from ..mcp_server import serve as run_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in ("mcp", "mcp_types", "pydantic"):
            raise KaosError(INSTALL_HINT) from None
        raise
    run_server(resolve_db(ctx, db))
