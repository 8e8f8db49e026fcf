"""Issue 33 item 9: free text that begins with '-' (a failure message like "-x: boom", a memory, a
query) is accepted after `--` and from stdin with `-`, and the usage error for the bare form says so.
The real `kaos` entry point in this process, on a real file.
"""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run_kaos_in_process as run_kaos

MESSAGE = "-x: option -x requires an argument (exit 2)"


def ok(db: Path, *args: str, input: str | None = None) -> str:
    r = run_kaos(*args, db=db, input=input)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout


def test_a_failure_message_beginning_with_a_dash_is_recorded_and_found(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    first = json.loads(ok(db, "failure", "record", "-t", "getopt", "--json", "--", MESSAGE))
    again = json.loads(ok(db, "failure", "record", "-t", "getopt", "--json", "-", input=MESSAGE))
    assert first["fingerprint_id"] == again["fingerprint_id"] and first["new"] and not again["new"]
    found = json.loads(ok(db, "failure", "lookup", "-t", "getopt", "--json", "--", MESSAGE))
    assert found["fingerprint_id"] == first["fingerprint_id"]
    bare = run_kaos("failure", "record", "-t", "getopt", MESSAGE, db=db)
    assert bare.returncode == 2 and "goes after --" in bare.stderr and "stdin" in bare.stderr, bare.stderr


def test_memory_query_and_intent_beginning_with_a_dash(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    ok(db, "memory", "add", "--key", "flags", "--", "-rf is never the default")
    assert json.loads(ok(db, "memory", "show", "flags", "--json"))["content"] == "-rf is never the default"
    piped = [h["name"] for h in json.loads(ok(db, "search", "--json", "-", input="-rf default\n"))]
    dashed = [h["name"] for h in json.loads(ok(db, "search", "--json", "--", "-rf default"))]
    assert piped == dashed == ["flags"]
    entry = json.loads(ok(db, "log", "intent", "agent-1", "--json", "--", "-delete the cache"))
    assert entry["action"] == "-delete the cache"
    empty = run_kaos("search", "-", db=db, input="")
    assert empty.returncode == 1 and "no query on stdin" in empty.stderr
