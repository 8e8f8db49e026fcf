"""`kaos search QUERY`: find skills and memories.

The command's signature is generated from :mod:`.search_options` (the table the fast path reads
too), so its options are written once; :func:`.search_run.execute` does the work.
"""

from __future__ import annotations

import inspect
from enum import StrEnum
from typing import Annotated, Any

import typer

from .libraries import GlobalOptions
from .search_options import DOC, QUERY_HELP, Option, options
from .search_run import execute


def _annotation(option: Option) -> tuple[Any, Any]:
    """(the parameter's annotation, its default) for one table entry."""
    info = typer.Option(option.flag, help=option.help, show_default=option.show_default,
                        **({"min": option.minimum, "max": option.maximum} if option.kind == "int" else {}))
    if option.kind == "flag":
        return Annotated[bool, info], option.default
    if option.kind == "choice":
        choice = StrEnum(f"{option.name.title()}Choice", {value: value for value in option.values()})  # type: ignore[misc]
        default = None if option.default is None else choice(option.default)
        kind: Any = choice if default is not None else choice | None
        return Annotated[kind, info], default
    if option.kind == "number":
        return Annotated[float | None, typer.Option(option.flag, help=option.help, show_default=False,
                                                    min=0.0, max=1.0)], option.default
    base: Any = int if option.kind == "int" else str
    return Annotated[base if option.default is not None else base | None, info], option.default


def _nonblank(value: str) -> str:
    """A blank query matches nothing useful: a usage error, not a silent empty answer."""
    if not value.strip():
        raise typer.BadParameter("the query is empty; say what to look for", param_hint="QUERY")
    return value


def _build() -> Any:
    def search(ctx: typer.Context, **values: Any) -> None:
        root = ctx.find_root().obj
        execute(root if isinstance(root, GlobalOptions) else GlobalOptions(), values)

    params = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
        inspect.Parameter("query", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[
            str, typer.Argument(help=QUERY_HELP, show_default=False, callback=_nonblank)]),
    ]
    for option in options():
        annotation, default = _annotation(option)
        params.append(inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=annotation))
    search.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    search.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    search.__doc__ = DOC
    return search


search = _build()
