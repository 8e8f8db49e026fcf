"""A typer group whose subcommands are imported the first time they are used.

Building all ~80 click commands (and importing every command module, the library and its
dependencies with them) cost ~0.1-0.2 s on every `kaos` call, though a call runs one command. The
root group knows each subcommand by name and where it lives; it imports and builds that one on
demand, exactly as ``app.add_typer`` / ``app.command`` would have built it eagerly. Help, completion
and anything that walks ``group.commands`` still see the whole tree (that loads everything).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import typer
import typer.core
import typer.main

Command = Any  # click's Command class: vendored by recent typer, the click package before


@dataclass(frozen=True)
class Lazy:
    """Where a subcommand lives: ``module.attribute`` is a ``typer.Typer`` (a group) or a function
    (a command); ``also`` are modules that add commands to that group when imported."""

    module: str
    attribute: str
    also: tuple[str, ...] = ()

    def build(self, name: str) -> Command:
        for extra in self.also:
            importlib.import_module(extra)
        target = getattr(importlib.import_module(self.module), self.attribute)
        holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        holder.callback()(_nothing)  # a callback makes typer build a group even for one command
        if isinstance(target, typer.Typer):
            holder.add_typer(target, name=name)
        else:
            holder.command(name)(target)
        group = typer.main.get_group(holder)
        return group.commands[name]


def _nothing() -> None:
    """Callback of the throw-away holder group."""


class LazyGroup(typer.core.TyperGroup):
    """The root group: ``lazy`` maps a subcommand name to where it lives (set by the subclass)."""

    lazy: dict[str, Lazy] = {}
    on_load: Callable[[Command], None] | None = None  # called once on each subcommand as it is built

    @property  # type: ignore[override]
    def commands(self) -> MutableMapping[str, Command]:
        for name in self.lazy:
            self._load(name)
        return self._commands

    @commands.setter
    def commands(self, value: MutableMapping[str, Command]) -> None:
        self._commands = value

    def _load(self, name: str) -> Command | None:
        command = self._commands.get(name)
        if command is None and name in self.lazy:
            command = self._commands[name] = self.lazy[name].build(name)
            if self.on_load is not None:
                self.on_load(command)
        return command

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Command | None:  # type: ignore[override]
        return self._load(cmd_name)

    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return list(self._commands) + [name for name in self.lazy if name not in self._commands]


def lazy_group(table: dict[str, Lazy]) -> Callable[..., LazyGroup]:
    """A LazyGroup class bound to ``table`` (typer instantiates the class itself)."""
    return type("KaosGroup", (LazyGroup,), {"lazy": table})
