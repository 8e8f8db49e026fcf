"""Every field of every MCP tool and of the CLI is capped alike (issue 33 item 5).

Each over-cap value goes through the real MCP server (a `kaos mcp serve` process) or a real `kaos`
process: the MCP call is a tool error (the server keeps serving), the CLI exits 1 with one line on
stderr, and nothing is written. The caps live in kaos_dream/limits.py; the docs must say them."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402

from kaos_dream import Library, Settings, limits  # noqa: E402

from .conftest import PROJECT_ROOT, file_digest, run_kaos  # noqa: E402
from .test_mcp_server import EXPECTED_TOOLS, call, call_error, drive  # noqa: E402


def rows_digest(db: Path) -> str:
    """Every table's rows (read-only, WAL included): equal digests mean nothing was written."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return hashlib.sha256(repr([(t, conn.execute(f'SELECT * FROM "{t}" ORDER BY 1').fetchall())
                                    for t in tables]).encode()).hexdigest()
    finally:
        conn.close()


def over(cap: int) -> str:
    return "x" * (cap + 1)


# (tool, arguments, words of the error). Every string field of every tool appears at least once; the
# fields a schema cannot cap (metadata's bytes, record_outcomes' items) are refused by the library.
MCP_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"query": over(limits.QUERY)}, f"at most {limits.QUERY}"),
    ("search", {"query": "csv", "task": over(limits.TASK)}, f"at most {limits.TASK}"),
    ("search", {"query": "csv", "record_hits": True, "agent": over(limits.NAME)}, f"at most {limits.NAME}"),
    ("record_outcome", {"skill": over(limits.REF), "success": True}, f"at most {limits.REF}"),
    ("record_outcome", {"skill": "csv-to-parquet", "success": True, "agent": "cap-agent",
                        "task": over(limits.TASK)}, f"at most {limits.TASK}"),
    ("record_outcomes", {"outcomes": [{"skill": "csv-to-parquet", "success": True}] * (limits.OUTCOMES + 1),
                         "agent": "cap-agent"}, f"at most {limits.OUTCOMES}"),
    ("record_outcomes", {"outcomes": [{"skill": "csv-to-parquet", "success": True, "task": over(limits.TASK)}],
                         "agent": "cap-agent"}, f"the limit is {limits.TASK}"),
    ("record_outcomes", {"outcomes": [{"skill": over(limits.REF), "success": True}], "agent": "cap-agent"},
     f"the limit is {limits.REF}"),
    ("agent_start", {"agent": over(limits.NAME)}, f"at most {limits.NAME}"),
    ("agent_start", {"name": over(limits.NAME)}, f"at most {limits.NAME}"),
    ("agent_end", {"agent": over(limits.NAME), "state": "completed"}, f"at most {limits.NAME}"),
    ("agent_end", {"agent": "cap-agent", "state": "completed", "conclusion": over(limits.CONCLUSION)},
     f"at most {limits.CONCLUSION}"),
    ("agent_end", {"agent": "cap-agent", "state": "completed", "citations": ["skill:csv-to-parquet"] *
                   (limits.CITATIONS + 1)}, f"at most {limits.CITATIONS}"),
    ("agent_end", {"agent": "cap-agent", "state": "completed", "citations": ["skill:" + over(limits.NODE)]},
     f"at most {limits.NODE}"),
    ("agent_end", {"agent": "cap-agent", "state": "failed", "tool": over(limits.NAME), "message": "boom"},
     f"at most {limits.NAME}"),
    ("agent_end", {"agent": "cap-agent", "state": "failed", "tool": "sh", "message": over(limits.TEXT)},
     f"at most {limits.TEXT}"),
    ("agent_end", {"agent": "cap-agent", "state": "failed", "error_tool": over(limits.NAME), "error": "boom"},
     f"at most {limits.NAME}"),
    ("agent_end", {"agent": "cap-agent", "state": "failed", "error_tool": "sh", "error": over(limits.TEXT)},
     f"at most {limits.TEXT}"),
    ("fix_outcome", {"failure": over(limits.REF), "worked": True, "agent": "cap-agent"}, f"at most {limits.REF}"),
    ("fix_outcome", {"failure": "1", "worked": True, "agent": over(limits.NAME)}, f"at most {limits.NAME}"),
    ("failure_record", {"tool": over(limits.NAME), "message": "boom"}, f"at most {limits.NAME}"),
    ("failure_record", {"tool": "sh", "message": over(limits.TEXT)}, f"at most {limits.TEXT}"),
    ("failure_record", {"tool": "sh", "message": "boom", "agent": over(limits.NAME)}, f"at most {limits.NAME}"),
    ("failure_lookup", {"tool": over(limits.NAME), "message": "boom"}, f"at most {limits.NAME}"),
    ("failure_lookup", {"tool": "sh", "message": over(limits.TEXT)}, f"at most {limits.TEXT}"),
    ("related", {"node": over(limits.NODE)}, f"at most {limits.NODE}"),
    ("skill_get", {"skill": over(limits.REF)}, f"at most {limits.REF}"),
    ("skill_file", {"skill": over(limits.REF), "path": "a.txt"}, f"at most {limits.REF}"),
    ("skill_file", {"skill": "csv-to-parquet", "path": over(limits.PATH)}, f"at most {limits.PATH}"),
    ("skill_apply", {"skill": over(limits.REF)}, f"at most {limits.REF}"),
    ("skill_apply", {"skill": "csv-to-parquet", "params": {"path": over(limits.PARAM_VALUE)}},
     f"at most {limits.PARAM_VALUE}"),
    ("skill_apply", {"skill": "csv-to-parquet", "params": {over(limits.NAME): "v"}}, f"at most {limits.NAME}"),
    ("skill_apply", {"skill": "csv-to-parquet", "params": {f"p{i}": "v" for i in range(limits.PARAMS + 1)}},
     f"at most {limits.PARAMS}"),
    ("memory_add", {"content": over(limits.TEXT)}, f"at most {limits.TEXT}"),
    ("memory_add", {"content": "a note", "kind": over(limits.NAME)}, f"at most {limits.NAME}"),
    ("memory_add", {"content": "a note", "key": over(limits.NAME)}, f"at most {limits.NAME}"),
    ("memory_add", {"content": "a note", "metadata": {"blob": over(limits.METADATA_BYTES)}},
     f"the limit is {limits.METADATA_BYTES}"),
]


def test_every_string_field_of_every_tool_has_a_case() -> None:
    """A new tool or field must come with its cap and a case here; the schema declares each cap."""
    from kaos_dream.mcp_server import build_server

    with Library(":memory:", settings=Settings()) as lib:
        server = build_server(lib)
        covered = {(tool, field) for tool, args, _ in MCP_CASES for field in args}
        missing = []
        for tool in server._tool_manager.list_tools():
            assert tool.name in EXPECTED_TOOLS
            for field, schema in tool.parameters["properties"].items():
                text = json.dumps(schema)
                if '"enum"' in text:  # a fixed choice is its own cap
                    continue
                if '"string"' in text or '"array"' in text or '"object"' in text:
                    if (tool.name, field) not in covered:
                        missing.append((tool.name, field))
                    if field != "metadata" and tool.name != "record_outcomes":
                        assert "maxLength" in text or "maxItems" in text or "maxProperties" in text, (tool.name, field)
        assert missing == [], missing


def test_each_tool_refuses_an_over_cap_field_as_a_tool_error(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    with Library(str(db), settings=Settings()) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to parquet", "Convert {path} to parquet", ["data"])
    before: list[str] = []

    async def script(s: ClientSession) -> None:
        await call(s, "agent_start", {"agent": "cap-agent"})
        before.append(rows_digest(db))
        for tool, args, words in MCP_CASES:
            message = await call_error(s, tool, args)
            assert words in message, (tool, sorted(args), message[:300])
            assert "\n" not in message.strip() and "Traceback" not in message, (tool, message[:300])
        status = await call(s, "dream_status", {})  # still serving after every refusal
        assert status is not None

    drive(db, script)
    assert rows_digest(db) == before[0]  # no refusal wrote anything


# (CLI arguments, words of the error, stdin) for the CLI's free-text fields, the same caps as MCP's. A
# value past the text cap goes through stdin: one argument may hold at most 128 KiB on Linux.
def _cli_cases() -> list[tuple[list[str], str, str | None]]:
    big_meta = json.dumps({"blob": "x" * 70_000})
    many_tags = [a for i in range(limits.TAGS + 1) for a in ("--tag", f"t{i}")]
    many_cites = [a for _ in range(limits.CITATIONS + 1) for a in ("--cite", "skill:csv-to-parquet")]
    return [
        (["search", over(limits.QUERY)], f"the limit is {limits.QUERY}", None),
        (["search", "csv", "--task", over(limits.TASK)], f"the limit is {limits.TASK}", None),
        (["record-outcome", "csv-to-parquet", "--success", "--task", over(limits.TASK)],
         f"the limit is {limits.TASK}", None),
        (["record-outcome", over(limits.REF), "--success"], f"the limit is {limits.REF}", None),
        (["skill", "add", over(limits.NAME)], f"the limit is {limits.NAME}", None),
        (["skill", "add", "new-skill", *many_tags], f"the limit is {limits.TAGS}", None),
        (["skill", "show", over(limits.REF)], f"the limit is {limits.REF}", None),
        (["skill", "apply", "csv-to-parquet", "--param", f"{over(limits.NAME)}=v"], f"the limit is {limits.NAME}",
         None),
        (["memory", "add", "-", "--key", "k"], f"the limit is {limits.TEXT}", over(limits.TEXT)),
        (["memory", "add", "a note", "--kind", over(limits.NAME)], f"{limits.NAME}", None),
        (["memory", "add", "a note", "--key", "k", "--meta", big_meta], f"the limit is {limits.METADATA_BYTES}", None),
        (["agent", "start", "--id", "cap-cli", "--name", over(limits.NAME)], f"the limit is {limits.NAME}", None),
        (["agent", "complete", "cap-agent", "--conclusion", over(limits.CONCLUSION)],
         f"the limit is {limits.CONCLUSION}", None),
        (["agent", "complete", "cap-agent", *many_cites], f"the limit is {limits.CITATIONS}", None),
        (["failure", "record", "--tool", "sh", "-"], f"the limit is {limits.TEXT}", over(limits.TEXT)),
        (["failure", "lookup", "--tool", "sh", "-"], f"the limit is {limits.TEXT}", over(limits.TEXT)),
        (["failure", "record", "--tool", over(limits.NAME), "boom"], f"{limits.NAME}", None),
        (["graph", "show", "skill:" + over(limits.NODE)], f"the limit is {limits.NODE}", None),
        (["log", "intent", "a1", over(limits.ACTION)], f"{limits.ACTION}", None),
        (["log", "vote", "a1", "1", "--approve", "--reason", over(limits.REASON)], f"the limit is {limits.REASON}",
         None),
        (["prefs", "set", over(limits.PREFERENCE_KEY), "v"], f"{limits.PREFERENCE_KEY}", None),
        (["graph", "record-query", over(limits.QUERY)], f"the limit is {limits.QUERY}", None),
        (["policy", "disable", "deploy the api", "--reason", over(limits.REASON)], f"the limit is {limits.REASON}",
         None),
        (["policy", "show", "9" * 30], "no policy", None),
        (["dream", "diagnose", "1", "--category", "code", "--root-cause", over(limits.DIAGNOSIS)],
         f"the limit is {limits.DIAGNOSIS}", None),
        (["dream", "diagnose", "1", "--category", "code", "--action", over(limits.DIAGNOSIS)],
         f"the limit is {limits.DIAGNOSIS}", None),
        (["prefs", "set", "risk", over(limits.PREFERENCE_VALUE)], f"{limits.PREFERENCE_VALUE}", None),
    ]


def test_the_cli_refuses_the_same_over_cap_values(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    with Library(str(db), settings=Settings()) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to parquet", "Convert {path} to parquet", ["data"])
        lib.episodes.start("cap-agent")
        lib.log.intent("a0", "deploy the api")
        lib.failures.record("sh", "boom")
    before = file_digest(db)
    for args, words, stdin in _cli_cases():
        result = run_kaos(*args, db=db, input=stdin)
        shown = [a[:40] for a in args]
        assert result.returncode == 1, (shown, result.returncode, result.stderr[:300])
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, (shown, result.stderr[:500])
        assert words in lines[0], (shown, lines[0][:300])
        assert file_digest(db) == before, shown  # nothing written


def test_the_docs_list_every_cap() -> None:
    """docs/cli.md (whose "MCP server" section points to it) says each cap with the number
    kaos_dream/limits.py holds."""
    for doc in ("docs/cli.md",):
        text = (PROJECT_ROOT / doc).read_text(encoding="utf-8")
        section = text[text.index("<!-- limits -->"):text.index("<!-- /limits -->")]
        for what, cap, unit, _ in limits.TABLE:
            assert re.search(rf"\|\s*{re.escape(what)}\s*\|\s*{cap:,}\s*{re.escape(unit)}\s*\|", section), (doc, what)
