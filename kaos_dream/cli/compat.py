"""Click's exception classes, wherever this typer keeps them.

Recent typer releases vendor click as ``typer._click``; older ones use the click package. The CLI
needs the exact classes to turn usage errors into one-line messages.
"""

from __future__ import annotations

try:  # typer >= 0.20 vendors click
    from typer._click.core import ParameterSource  # type: ignore[import-not-found]
    from typer._click.exceptions import (  # type: ignore[import-not-found]
        ClickException,
        NoArgsIsHelpError,
        NoSuchOption,
        UsageError,
    )
    from typer._click.globals import get_current_context  # type: ignore[import-not-found]
    from typer.exceptions import Abort, Exit  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import get_current_context
    from click.core import ParameterSource
    from click.exceptions import Abort, ClickException, Exit, NoSuchOption, UsageError

    class NoArgsIsHelpError(UsageError):  # type: ignore[no-redef]
        """Never raised by this click: a placeholder so the handler list stays the same."""

__all__ = ["Abort", "ClickException", "Exit", "NoArgsIsHelpError", "NoSuchOption", "ParameterSource", "UsageError",
           "get_current_context"]
