"""The `kaos` console-script entry point, kept free of heavy imports.

A shell loop or a cron job pays the start-up on every call: ``kaos --version`` is answered here,
before typer, rich or the library are imported, and so are a plain search, a hook call and a
``dream run --if-due`` that finds nothing due; everything else goes to :func:`kaos_dream.cli.run`.
"""

from __future__ import annotations

import os
import sys

from .argv import asks_version, is_utf8_text, version_after_words, version_line

__all__ = ["asks_version", "run", "main"]


_answered_fast = False  # set when the fast search path ran: main() may then skip the interpreter's teardown


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; ``--version`` and plain searches without the command tree."""
    global _answered_fast
    _answered_fast = False
    args = sys.argv[1:] if argv is None else argv
    text = all(is_utf8_text(arg) for arg in args)
    if asks_version(args) and text:
        extra = version_after_words(args)
        if extra is not None:
            sys.stderr.write(f"kaos: usage error: {extra}\n")
            return 2
        sys.stdout.write(version_line())
        sys.stdout.flush()
        return 0
    if text and "search" in args:
        code = run_search(args)
        if code is not None:
            return code
    if text and "--if-due" in args and "dream" in args:
        from .cli.dream_due import answer

        code = answer(args)
        if code is not None:
            return code
    if text and "hook" in args:
        code = run_hook(args)
        if code is not None:
            return code
    from .cli import run as run_cli

    return run_cli(args)


def run_search(args: list[str]) -> int | None:
    """`kaos search …` without typer (see :mod:`kaos_dream.cli.search_options`); None when the
    arguments need click's judgement (help, an error, an option it does not know)."""
    from .cli import search_options

    if not search_options.names_command(args):
        return None
    single_blas_thread()
    parsed = search_options.parse(args)
    if parsed is None:
        return None
    from .cli import guard, output
    from .cli.libraries import GlobalOptions
    from .cli.search_run import execute

    if guard.completing():
        return None
    guard.start_command()
    if parsed.format is not None:
        output.set_format(parsed.format)
    output.mode.header, output.mode.quiet, output.mode.limit_given = parsed.header, parsed.quiet, parsed.limit_given
    guard.strict_stdin()

    def command() -> int:
        execute(GlobalOptions(parsed.root_db, parsed.root_json), parsed.values)
        return 0

    global _answered_fast
    _answered_fast = True
    return guard.guarded(command)


_HOOK_OPTIONS = ("--db", "--spool", "--wait-ms")


def hook_arguments(args: list[str]) -> tuple[str, dict[str, str]] | None:
    """``[--db V] hook SHAPE [--db V] [--spool V] [--wait-ms N]`` as (shape, options); None for
    anything else (help, a typo, another command), which click then judges."""
    from .harness.run import SHAPES

    options: dict[str, str] = {}
    rest = list(args)

    def take(allowed: tuple[str, ...], prefix: str) -> bool:
        arg = rest[0]
        name, eq, value = arg.partition("=")
        if name not in allowed:
            return False
        if not eq:
            if len(rest) < 2:
                return False
            value = rest[1]
            del rest[0]
        del rest[0]
        options[prefix + name] = value
        return True

    while rest and rest[0] != "hook":
        if not take(("--db",), "root"):
            return None
    if len(rest) < 2 or rest[1] not in SHAPES:
        return None
    shape = rest[1]
    del rest[:2]
    while rest:
        if not take(_HOOK_OPTIONS, ""):
            return None
    return shape, options


def run_hook(args: list[str]) -> int | None:
    """`kaos hook claude-code|jsonl` without typer: a hook runs on every tool call of an agent, so
    its start-up is most of its cost. None when the arguments need click (help, a bad option)."""
    parsed = hook_arguments(args)
    if parsed is None:
        return None
    shape, options = parsed
    wait = options.get("--wait-ms")
    if wait is not None and (not wait.isdigit() or int(wait) > 60_000):
        return None  # click says what is wrong with it
    db = options.get("--db") or options.get("root--db") or os.environ.get("KAOS_DB")
    if db is not None and not db.strip():
        return None
    if not db:
        from .settings import Settings

        db = Settings.from_env().db
    from .harness.run import DEFAULT_WAIT_MS, handle, read_stdin

    global _answered_fast
    _answered_fast = True
    return handle(shape, read_stdin(), db, spool_base=options.get("--spool"),
                  wait_ms=int(wait) if wait is not None else DEFAULT_WAIT_MS)


def single_blas_thread() -> None:
    """A search multiplies a few hundred rows: OpenBLAS's thread pool would cost more CPU to start
    (~50 ms here, most of numpy's import) than it could save. Left alone when the user chose."""
    if not any(os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def main() -> None:
    # Started with stdout or stderr closed (`kaos … >&-`): Python leaves them None. Nobody is
    # listening, but the command must still run and report through its exit code.
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - lives as long as the process
    try:
        code = run()
    except BrokenPipeError:  # `kaos --version | true`: the reader left first
        code = 0
    if _answered_fast:
        end_now(code)
    sys.exit(code)


def end_now(code: int) -> None:
    """Exit without the interpreter's teardown, once output is flushed: after a fast-path search
    nothing is left open (the library is closed, no thread runs, no exit handler is registered), and
    freeing every numpy module one by one costs ~15 ms of CPU, more than the search. A flush that
    fails (the reader left) leaves the ending to the interpreter, as on the usual path."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - any failure: end the usual way
        return
    os._exit(code)
