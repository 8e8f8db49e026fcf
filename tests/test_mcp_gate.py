"""The MCP server's library gate, in-process: errors become tool errors and no transaction outlives a call."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

from kaos_dream import Library  # noqa: E402
from kaos_dream.mcp_server import LibraryGate  # noqa: E402


def test_kaos_errors_become_tool_errors_with_their_text(lib: Library) -> None:
    gate = LibraryGate(lib)
    with pytest.raises(ToolError, match=r"^no skill 'nope'$"):
        gate.call(lambda lb: lb.skills.get("nope"))


def test_a_crash_is_a_tool_error_and_its_transaction_is_rolled_back(lib: Library) -> None:
    gate = LibraryGate(lib)

    def half_done(lb: Library) -> None:
        lb.conn.execute("BEGIN IMMEDIATE")
        lb.conn.execute("INSERT INTO memories (kind, key, content, metadata, created_at, updated_at)"
                        " VALUES ('note', 'k', 'c', '{}', 0, 0)")
        raise RuntimeError("bug")

    with pytest.raises(ToolError, match=r"^internal error: RuntimeError: bug$"):
        gate.call(half_done)
    assert not lib.conn.in_transaction
    assert lib.memories.count() == 0
    assert gate.call(lambda lb: lb.memories.add("after", key="k2").key) == "k2"


def test_sqlite_errors_are_described(lib: Library) -> None:
    gate = LibraryGate(lib)
    with pytest.raises(ToolError, match='no such table|relation "nowhere" does not exist') as caught:
        gate.call(lambda lb: lb.conn.execute("SELECT * FROM nowhere"))
    assert str(caught.value).startswith(lib.conn.kaos_path + ": ")  # the library named, its password masked
    assert gate.call(lambda lb: lb.skills.count()) == 0  # the failed statement left no transaction behind
