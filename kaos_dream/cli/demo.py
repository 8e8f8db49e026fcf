"""`kaos demo`: build a small demo library in a fresh file and show the library at work."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from ..demo import build_demo_library
from . import output
from .common import JsonOption, wants_json


def demo(
    ctx: typer.Context,
    db: Annotated[str, typer.Option("--db", help="Demo file to (re)create.")] = "kaos-demo.db",
    json_out: JsonOption = False,
) -> None:
    """Create a demo library in a fresh file (default ./kaos-demo.db) and run searches on it.

    Example: kaos demo --db /tmp/demo.db
    """
    report = build_demo_library(db)
    if wants_json(ctx, json_out):
        output.emit_json(report)
        return
    output.message(f"demo library written to {os.path.abspath(db)}", style="bold")
    output.message(f"{report['skills']} skills, {report['memories']} memories")
    for query, hits in report["searches"].items():
        output.table(
            f"kaos --db {db} search {query!r}",
            ["#", "kind", "name", "score"],
            ([i, h["kind"], h["name"], h["score"]] for i, h in enumerate(hits, 1)),
        )
    output.message("next: " + "; ".join(report["next"]))
