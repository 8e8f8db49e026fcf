"""`kaos config`: every setting, its effective value and where the value came from."""

from __future__ import annotations

import typer

from ..settings import describe_settings
from . import output
from .common import JsonOption, wants_json


def config(ctx: typer.Context, json_out: JsonOption = False) -> None:
    """List every setting (environment variable), its value and its source: `env` or `default`.

    Reads nothing but the environment; the API key is shown only as set / not set.

    Example: KAOS_DREAM_THRESHOLD=50 kaos config
    """
    rows = describe_settings()
    if wants_json(ctx, json_out):
        output.emit_json(rows)
        return
    output.table("settings", ["variable", "value", "source", "default"],
                 ([r["variable"], r["value"], r["source"], r["default"]] for r in rows))
