"""The `kaos` command line: parses arguments, calls the library, renders the result.

The typer application lives in :mod:`kaos_dream.cli.application` and is imported on first use of any of the
names below, so the modules a fast path needs (``output``, ``search_options``, ``guard``) can be
imported without typer, rich or click (~0.1 s of CPU per call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .application import COMMANDS, app, click_command, fail, run

__all__ = ["COMMANDS", "app", "click_command", "fail", "run"]

__getattr__ = lazy_attributes(__name__, dict.fromkeys(__all__, "application"), globals())
