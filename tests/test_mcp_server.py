"""`kaos mcp serve` driven by the MCP SDK's own stdio client, as an agent host would drive it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402  (only after the skip: anyio comes with the mcp extra)
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from kaos_dream import Library, Settings  # noqa: E402

from .conftest import PROJECT_ROOT, file_digest, kaos_command, library_digest, run_kaos  # noqa: E402

EXPECTED_TOOLS = {
    "agent_start", "search", "skill_get", "skill_file", "skill_apply", "record_outcome", "record_outcomes",
    "memory_add",
    "failure_lookup",
    "failure_record", "fix_outcome", "agent_end", "alerts_check", "related", "dream_status",
}


def server_params(db: Path | str, extra_env: dict[str, str] | None = None) -> StdioServerParameters:
    env = {"PYTHONPATH": str(PROJECT_ROOT), **(extra_env or {})}
    cmd = kaos_command()
    return StdioServerParameters(command=cmd[0], args=[*cmd[1:], "--db", str(db), "mcp", "serve"], env=env)


@asynccontextmanager
async def session(db: Path | str, extra_env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(server_params(db, extra_env), errlog=errlog) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            yield s


async def call(s: ClientSession, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A successful call's structured result (fails the test on a tool error)."""
    result = await s.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert not result.is_error, f"{name}({args}) failed: {text}"
    assert result.structured_content == json.loads(text)
    return result.structured_content


async def call_error(s: ClientSession, name: str, args: dict[str, Any]) -> str:
    """A failing call's message (fails the test when the call succeeds)."""
    result = await s.call_tool(name, args)
    assert result.is_error, f"{name}({args}) unexpectedly succeeded"
    return " ".join(getattr(c, "text", "") for c in result.content)


def drive(db: Path | str, script: Callable[[ClientSession], Awaitable[None]]) -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            async with session(db) as s:
                await script(s)

    anyio.run(main)


@pytest.fixture
def library_file(library_target: str) -> str:
    """The library the server opens: a file, or a database on the test server (both engines: conftest)."""
    path = library_target
    with Library(path, settings=Settings()) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to parquet with pyarrow", "Convert {path} to parquet",
                       tags=["data"])
        lib.skills.add("retry-with-backoff", "Retry a rate limited HTTP call with exponential backoff",
                       "Retry {call} up to {times} times")
        lib.memories.add("S3 throttles at 3500 PUT requests per second per prefix", kind="insight",
                         key="s3-throttle")
    return path


def digest(target: str) -> str:
    """The file's bytes on SQLite; every table's rows on PostgreSQL (conftest.library_digest)."""
    if not target.startswith("postgresql://"):
        return file_digest(Path(target))
    with Library(target, settings=Settings(), readonly=True) as lib:
        return library_digest(lib)


def test_lists_every_tool_and_read_tools_leave_the_file_unchanged(library_file: str) -> None:
    before = digest(library_file)

    async def script(s: ClientSession) -> None:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        assert set(listed) == EXPECTED_TOOLS
        for tool in listed.values():
            assert tool.description and len(tool.description) < 600
            assert tool.input_schema["type"] == "object"
        search = listed["search"].input_schema
        assert search["required"] == ["query"]
        assert search["properties"]["kind"]["enum"] == ["all", "skill", "memory"]
        assert search["properties"]["limit"]["type"] == "integer"
        assert listed["failure_record"].input_schema["required"] == ["tool", "message"]
        # Human-only operations are named as such where an agent would look for them.
        assert "human-only" in listed["alerts_check"].description
        assert "human-only" in listed["dream_status"].description
        assert listed["skill_get"].annotations.read_only_hint is True
        assert listed["search"].annotations.read_only_hint is False  # record_hits writes
        end = listed["agent_end"].input_schema
        assert end["required"] == ["agent", "state"]
        assert end["properties"]["state"]["enum"] == ["completed", "failed", "killed"]
        assert end["properties"]["citations"]["type"] == "array"
        assert listed["record_outcome"].input_schema["properties"]["success"]["type"] == "boolean"
        assert listed["failure_record"].annotations.read_only_hint is False
        await call(s, "search", {"query": "csv", "expand": 3})
        await call(s, "skill_get", {"skill": "csv-to-parquet"})
        await call(s, "skill_apply", {"skill": "csv-to-parquet", "params": {"path": "x.csv"}})
        await call(s, "failure_lookup", {"tool": "sh", "message": "command not found"})
        await call(s, "alerts_check", {})
        await call(s, "related", {"node": "memory:s3-throttle"})
        await call(s, "dream_status", {})
        assert digest(library_file) == before  # checked while the server still holds the file open

    drive(library_file, script)
    assert digest(library_file) == before


def test_tools_act_on_the_library(library_file: str) -> None:
    async def script(s: ClientSession) -> None:
        found = await call(s, "search", {"query": "convert csv to parquet", "kind": "skill"})
        assert [r["name"] for r in found["results"]][:1] == ["csv-to-parquet"]
        skill = await call(s, "skill_get", {"skill": "csv-to-parquet"})
        assert skill["parameters"] == ["path"] and skill["tags"] == ["data"]
        applied = await call(s, "skill_apply", {"skill": "retry-with-backoff",
                                                "params": {"call": "GET /items", "times": 5}})
        assert applied["rendered"] == "Retry GET /items up to 5 times"
        memory = await call(s, "memory_add", {"content": "parquet needs pyarrow>=14", "kind": "insight",
                                              "key": "pyarrow", "metadata": {"source": "run-7"}})
        assert memory["key"] == "pyarrow" and memory["metadata"] == {"source": "run-7"}
        for agent in ("a1", "a2"):  # a server acts only on episodes it started (issue 17)
            await call(s, "agent_start", {"agent": agent})
        first = await call(s, "failure_record", {"tool": "http_get", "message": "HTTP 429 Too Many Requests",
                                                 "agent": "a1"})
        assert first["new"] is True and first["category"] == "transient"
        again = await call(s, "failure_record", {"tool": "http_get", "message": "HTTP 429 Too Many Requests",
                                                 "agent": "a2"})
        assert again["new"] is False and again["fingerprint_id"] == first["fingerprint_id"]
        known = await call(s, "failure_lookup", {"tool": "http_get", "message": "HTTP 429 Too Many Requests"})
        assert known["known"] is True and known["occurrences"] == 2 and known["preventing_skills"] == []
        assert await call(s, "failure_lookup", {"tool": "http_get", "message": "disk full"}) == {"known": False}
        status = await call(s, "dream_status", {})
        # a1 and a2 started their sessions above (issue 17), so their failure reports leave them running
        assert status["agents"] == {"running": 2} and status["failures"] == {"fingerprints": 1, "open_alerts": 0}
        assert await call(s, "alerts_check", {}) == {"clear": True, "alerts": []}

    drive(library_file, script)
    with Library(library_file, settings=Settings(), readonly=True) as lib:
        assert lib.memories.get("pyarrow").content == "parquet needs pyarrow>=14"
        fp = lib.failures.list()[0]
        assert fp["occurrences"] == 2 and fp["agents"] == 2


def test_a_full_episode_over_mcp(library_file: str) -> None:
    """search -> apply -> record outcome -> failure -> end, for a failed and then a completed episode."""
    seen: dict[str, Any] = {}

    async def script(s: ClientSession) -> None:
        started = await call(s, "agent_start", {"agent": "etl-1", "name": "nightly ETL"})
        assert started["id"] == "etl-1" and started["state"] == "running"
        found = await call(s, "search", {"query": "convert csv to parquet", "record_hits": True, "agent": "etl-1"})
        assert found["results"][0]["name"] == "csv-to-parquet" and found["recorded_hits"] == len(found["results"])
        applied = await call(s, "skill_apply", {"skill": "csv-to-parquet", "params": {"path": "in.csv"}})
        assert applied["rendered"] == "Convert in.csv to parquet"
        outcome = await call(s, "record_outcome", {"skill": "csv-to-parquet", "success": False, "agent": "etl-1"})
        assert outcome["skill"] == "csv-to-parquet" and outcome["task"] == "convert csv to parquet"
        looked = await call(s, "failure_lookup", {"tool": "pyarrow", "message": "ArrowInvalid: CSV parse error"})
        assert looked == {"known": False}
        ended = await call(s, "agent_end", {
            "agent": "etl-1", "state": "failed", "conclusion": "the CSV was malformed",
            "citations": ["skill:csv-to-parquet"], "error_tool": "pyarrow",
            "error": "ArrowInvalid: CSV parse error: Expected 3 columns, got 4",
        })
        assert ended["changed"] is True and ended["learned"] is False and ended["episode"]["state"] == "failed"
        assert ended["failure"]["new"] is True
        seen["fp"] = ended["failure"]["fingerprint_id"]
        # The failure was recorded before the episode ended, so the episode-end hook linked the skill to it.
        caused = await call(s, "related", {"node": f"failure:{seen['fp']}", "relation": "caused"})
        assert [(n["label"], n["direction"]) for n in caused["neighbours"]] == [("csv-to-parquet", "in")]
        again = await call(s, "agent_end", {"agent": "etl-1", "state": "completed"})
        assert again["changed"] is False and again["failure"] is None and again["episode"]["state"] == "failed"

        # A second agent succeeds with two skills and a memory: a completed episode may teach the graph.
        second = (await call(s, "agent_start", {}))["id"]
        seen["second"] = second
        await call(s, "search", {"query": "s3 throttle", "record_hits": True, "agent": second})
        for skill in ("csv-to-parquet", "retry-with-backoff"):
            await call(s, "record_outcome", {"skill": skill, "success": True, "agent": second,
                                             "task": "load the nightly files"})
        done = await call(s, "agent_end", {"agent": second, "state": "completed", "conclusion": "loaded",
                                           "citations": ["memory:s3-throttle", "skill:retry-with-backoff"]})
        assert done["learned"] is True and done["pairs"] == 3
        ranked = await call(s, "search", {"query": "convert csv", "kind": "skill", "rank": "wilson"})
        assert (ranked["results"][0]["uses"], ranked["results"][0]["successes"]) == (2, 1)
        status = await call(s, "dream_status", {})
        assert status["agents"] == {"completed": 1, "failed": 1}
        assert status["telemetry"]["skill_uses"] == 3 and status["telemetry"]["coactivations"] == 3

    drive(library_file, script)
    with Library(library_file, settings=Settings(), readonly=True) as lib:
        conn = lib.conn
        first = lib.episodes.get("etl-1")
        assert first.state == "failed" and first.conclusion == "the CSV was malformed"
        assert first.citations == (("skill", "csv-to-parquet"),)
        uses = conn.execute("SELECT u.success, coalesce(u.task, t.text) FROM skill_uses AS u "
                            "LEFT JOIN tasks AS t ON t.id = u.task_id JOIN agent_keys AS a ON a.id = u.agent_key "
                            "WHERE a.agent_id = 'etl-1'").fetchall()
        assert [tuple(r) for r in uses] == [(0, "convert csv to parquet")]
        assert conn.execute("SELECT count(*) FROM skill_hits WHERE agent_id = 'etl-1'").fetchone()[0] >= 1
        assert lib.failures.ids_for_agent("etl-1") == (seen["fp"],)
        assert lib.failures.get(seen["fp"])["tool"] == "pyarrow"
        hits = conn.execute("SELECT count(*) FROM memory_hits WHERE agent_id = ?", (seen["second"],)).fetchone()[0]
        assert hits == 1
        pairs = conn.execute("SELECT a_kind, b_kind, count FROM coactivations").fetchall()
        assert sorted(tuple(r) for r in pairs) == [("memory", "skill", 0.5), ("memory", "skill", 0.5),
                                                   ("skill", "skill", 1.0)]
        assert lib.check() == []


def test_failure_lookup_names_preventing_skills_and_related_follows_edges(library_file: str) -> None:
    async def script(s: ClientSession) -> None:
        fp = (await call(s, "failure_record", {"tool": "http_get", "message": "HTTP 429 Too Many Requests"}))
        fp_id = fp["fingerprint_id"]
        with Library(library_file, settings=Settings()) as lib:  # a second process-like writer: the CLI's job
            from kaos_dream.graph.nodes import Node

            lib.graph.add_evidence(Node("skill", lib.skills.resolve_id("retry-with-backoff")), "prevented",
                                   Node("failure", fp_id))
        known = await call(s, "failure_lookup", {"tool": "http_get", "message": "HTTP 429 Too Many Requests"})
        assert [p["name"] for p in known["preventing_skills"]] == ["retry-with-backoff"]
        near = await call(s, "related", {"node": f"failure:{fp_id}"})
        assert near["neighbours"] == [
            {"node": "skill:2", "label": "retry-with-backoff", "relation": "prevented", "direction": "in",
             "strength": pytest.approx(0.55), "provenance": "observed", "deprecated": False}
        ]
        out = await call(s, "related", {"node": "skill:retry-with-backoff", "direction": "out"})
        assert [n["node"] for n in out["neighbours"]] == [f"failure:{fp_id}"]
        assert (await call(s, "related", {"node": "skill:retry-with-backoff", "direction": "in"}))["neighbours"] == []
        before = (await call(s, "dream_status", {}))["dream"]
        assert before["cycle"] == 0 and before["last_run"] is None and before["running"] is None
        with Library(library_file, settings=Settings()) as lib:  # a human runs the dream from the CLI
            lib.dream.run(apply=True)
        after = (await call(s, "dream_status", {}))["dream"]
        assert after["cycle"] == 1 and after["last_run"]["status"] == "completed"
        assert after["last_run"]["mode"] == "apply"

    drive(library_file, script)


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(library_file: str) -> None:
    async def script(s: ClientSession) -> None:
        message = await call_error(s, "search", {})
        assert "query: required" in message and "pydantic" not in message
        assert "limit: Input should be a valid integer" in await call_error(s, "search", {"query": "x",
                                                                                          "limit": "many"})
        assert "limit: Input should be less than or equal to 100" in await call_error(
            s, "search", {"query": "x", "limit": 101})
        assert "kind: Input should be 'all', 'skill' or 'memory'" in await call_error(
            s, "search", {"query": "x", "kind": "everything"})
        assert "unknown argument(s) limt" in await call_error(s, "search", {"query": "x", "limt": 3})
        assert "no skill 'no-such-skill'" in await call_error(s, "skill_get", {"skill": "no-such-skill"})
        assert "missing template parameter(s): path" in await call_error(s, "skill_apply",
                                                                         {"skill": "csv-to-parquet"})
        assert "unknown template parameter(s): paht" in await call_error(
            s, "skill_apply", {"skill": "csv-to-parquet", "params": {"path": "a", "paht": "b"}})
        assert "a memory with key 's3-throttle' already exists" in await call_error(
            s, "memory_add", {"content": "again", "key": "s3-throttle"})
        assert "non-empty error message" in await call_error(s, "failure_record", {"tool": "sh", "message": " "})
        assert "bad node 'csv'" in await call_error(s, "related", {"node": "csv"})
        assert "message: required" in await call_error(s, "failure_lookup", {"tool": "sh"})
        assert "Unknown tool" in await call_error(s, "merge_accept", {})
        assert "no skill 'no-such-skill'" in await call_error(s, "record_outcome",
                                                              {"skill": "no-such-skill", "success": True})
        assert "success: Input should be a valid boolean" in await call_error(
            s, "record_outcome", {"skill": "csv-to-parquet", "success": "maybe"})
        assert "success: required" in await call_error(s, "record_outcome", {"skill": "csv-to-parquet"})
        assert "episode 'ghost' is neither" in await call_error(
            s, "agent_end", {"agent": "ghost", "state": "completed"})
        assert "state: Input should be 'completed', 'failed' or 'killed'" in await call_error(
            s, "agent_end", {"agent": "ghost", "state": "done"})
        await call(s, "agent_start", {"agent": "a1"})
        assert "agent 'a1' already exists" in await call_error(s, "agent_start", {"agent": "a1"})
        assert "for state 'failed' only" in await call_error(
            s, "agent_end", {"agent": "a1", "state": "completed", "error_tool": "sh", "error": "boom"})
        assert "give both tool and message" in await call_error(
            s, "agent_end", {"agent": "a1", "state": "failed", "error_tool": "sh"})
        assert "bad citation 'csv-to-parquet'" in await call_error(
            s, "agent_end", {"agent": "a1", "state": "completed", "citations": ["csv-to-parquet"]})
        assert "citations: Input should be a valid list" in await call_error(
            s, "agent_end", {"agent": "a1", "state": "completed", "citations": "skill:csv-to-parquet"})
        assert "rank: Input should be 'weighted', 'wilson' or 'bm25'" in await call_error(
            s, "search", {"query": "x", "rank": "best"})
        # Still serving, and nothing half-written by the failed calls.
        found = await call(s, "search", {"query": "s3 throttle"})
        assert [r["name"] for r in found["results"]] == ["s3-throttle"]

    drive(library_file, script)
    with Library(library_file, settings=Settings(), readonly=True) as lib:
        assert lib.memories.count() == 1 and lib.failures.list() == []
        assert lib.episodes.get("a1").state == "running"  # every rejected agent_end left it untouched
        assert lib.conn.execute("SELECT count(*) FROM skill_uses").fetchone()[0] == 0


def test_concurrent_calls_in_one_server_are_serialised(library_file: str) -> None:
    """The SDK runs tools on worker threads; 40 writes fired at once must all land, none lost."""
    async def script(s: ClientSession) -> None:
        results: list[dict[str, Any]] = []

        async def one(i: int) -> None:
            if i % 2:
                results.append(await call(s, "memory_add", {"content": f"note {i}", "key": f"k{i}"}))
            else:
                await call(s, "agent_start", {"agent": f"a{i}"})
                results.append(await call(s, "failure_record", {"tool": "t", "message": f"boom {i}",
                                                                "agent": f"a{i}"}))

        async with anyio.create_task_group() as tg:
            for i in range(40):
                tg.start_soon(one, i)
        assert len(results) == 40

    drive(library_file, script)
    with Library(library_file, settings=Settings(), readonly=True) as lib:
        assert lib.memories.count() == 1 + 20
        assert sum(f["occurrences"] for f in lib.failures.list()) == 20


def test_many_server_processes_write_one_file(library_file: str) -> None:
    """Four servers (four agent hosts) running episodes at once: every row and counter lands exactly."""
    per_server = 8

    async def host(n: int) -> None:
        async with session(library_file) as s:
            for i in range(per_server):
                agent = f"host{n}-{i}"
                await call(s, "agent_start", {"agent": agent})
                await call(s, "search", {"query": "csv parquet", "record_hits": True, "agent": agent})
                await call(s, "record_outcome", {"skill": "csv-to-parquet", "success": i % 2 == 0, "agent": agent})
                await call(s, "failure_record", {"tool": "http_get", "message": "HTTP 503 Service Unavailable",
                                                 "agent": agent})
                await call(s, "memory_add", {"content": f"host {n} note {i}", "key": f"h{n}-{i}"})
                await call(s, "agent_end", {"agent": agent, "state": "completed" if i % 2 == 0 else "failed"})

    async def main() -> None:
        with anyio.fail_after(180):
            async with anyio.create_task_group() as tg:
                for n in range(4):
                    tg.start_soon(host, n)

    anyio.run(main)
    total = 4 * per_server
    with Library(library_file, settings=Settings(), readonly=True) as lib:
        fps = lib.failures.list()
        assert len(fps) == 1 and fps[0]["occurrences"] == total and fps[0]["agents"] == total
        assert lib.memories.count() == 1 + total
        conn = lib.conn
        assert tuple(conn.execute("SELECT uses, successes FROM skill_stats").fetchone()) == (total, total // 2)
        assert conn.execute("SELECT count(*) FROM skill_uses").fetchone()[0] == total
        states = dict(conn.execute("SELECT state, count(*) FROM agents GROUP BY state").fetchall())
        assert states == {"completed": total // 2, "failed": total // 2}
        assert lib.check() == []


def test_without_the_extra_serve_says_how_to_install(tmp_path: Path) -> None:
    """The mcp package hidden by an import hook (not uninstalled): one line on stderr, non-zero exit."""
    hide = (
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('mcp', 'mcp_types'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "from kaos_dream.entry import main\n"
        "sys.argv = ['kaos'] + sys.argv[1:]\n"
        "main()\n"
    )
    db = tmp_path / "kaos.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    proc = subprocess.run([sys.executable, "-c", hide, "--db", str(db), "mcp", "serve"], capture_output=True,
                          text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert 'pip install "kaos-dream[mcp]"' in proc.stderr
    assert not db.exists()
    # The same hook leaves every other command working.
    proc = subprocess.run([sys.executable, "-c", hide, "--db", str(db), "init"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_bad_database_is_reported_before_serving(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all")
    result = run_kaos("mcp", "serve", db=junk, input="")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("kaos: error: ") and "not a SQLite database" in result.stderr
    assert junk.read_bytes() == b"not a database at all"


def test_help_has_an_example(kaos) -> None:
    result = kaos("mcp", "serve", "--help")
    assert result.returncode == 0 and "Example: kaos mcp serve" in result.stdout


def test_search_explores_with_a_seed(library_file: str) -> None:
    async def script(s: ClientSession) -> None:
        schema = {t.name: t for t in (await s.list_tools()).tools}["search"].input_schema["properties"]
        assert schema["explore"]["type"] == "boolean" and schema["explore"]["default"] is False
        args = {"query": "convert csv to parquet", "kind": "skill", "explore": True, "seed": 5}
        first = await call(s, "search", args)
        assert first == await call(s, "search", args) and first["results"]
        assert "explore" in await call_error(s, "search", {"query": "csv", "seed": 5})

    drive(library_file, script)


def test_related_hides_deprecated_skills_unless_asked_and_marks_them(library_file: str) -> None:
    with Library(library_file, settings=Settings()) as lib:
        from kaos_dream.graph.nodes import Node

        memory = lib.memories.resolve_id("s3-throttle")
        for name in ("csv-to-parquet", "retry-with-backoff"):
            lib.graph.add_evidence(Node("memory", memory), "enabled", Node("skill", lib.skills.resolve_id(name)))
        lib.skills.deprecate("retry-with-backoff", "superseded")

    async def script(s: ClientSession) -> None:
        hidden = await call(s, "related", {"node": "memory:s3-throttle"})
        assert [(n["label"], n["deprecated"]) for n in hidden["neighbours"]] == [("csv-to-parquet", False)]
        shown = await call(s, "related", {"node": "memory:s3-throttle", "include_deprecated": True})
        assert [(n["label"], n["deprecated"]) for n in shown["neighbours"]] == [
            ("csv-to-parquet", False), ("retry-with-backoff", True)]

    drive(library_file, script)


def test_record_outcomes_reports_a_batch_in_one_call_and_a_bad_item_writes_nothing(library_file: str) -> None:
    async def script(s: ClientSession) -> None:
        await call(s, "agent_start", {"agent": "etl-7"})
        done = await call(s, "record_outcomes", {"agent": "etl-7", "outcomes": [
            {"skill": "csv-to-parquet", "success": True, "task": "convert csv"},
            {"skill": "retry-with-backoff", "success": False}]})
        assert (done["recorded"], done["successes"]) == (2, 1)
        assert [o["agent_id"] for o in done["outcomes"]] == ["etl-7", "etl-7"]
        assert "outcome 2: " in await call_error(s, "record_outcomes", {"agent": "etl-7", "outcomes": [
            {"skill": "csv-to-parquet", "success": True}, {"skill": "no-such-skill", "success": True}]})
        assert "give the agent once" in await call_error(s, "record_outcomes", {"agent": "etl-7", "outcomes": [
            {"skill": "csv-to-parquet", "success": True, "agent": "someone-else"}]})
        refused = await call_error(s, "record_outcomes", {"agent": "forged-1", "outcomes": [
            {"skill": "csv-to-parquet", "success": True}]})
        assert "may only act on episodes it started" in refused and "record outcomes for it" in refused

    drive(library_file, script)
    with Library(library_file) as lib:
        assert lib.conn.execute("SELECT count(*) FROM skill_uses").fetchone()[0] == 2


def test_agent_end_records_cost_and_names_the_failure_as_failure_record_does(library_file: str) -> None:
    """Issue 32 item 6 and issue 36: agent_end takes the episode's cost, and the failure's text is
    `message` (with `tool`) as in failure_record; the older `error`/`error_tool` still work. Times come
    back as ISO 8601 with the epoch beside them."""

    async def script(s: ClientSession) -> None:
        started = await call(s, "agent_start", {"agent": "c1"})
        assert started["started_at"].endswith("Z") and isinstance(started["started_at_epoch"], float)
        ended = await call(s, "agent_end", {"agent": "c1", "state": "failed", "tool": "pyarrow",
                                            "message": "ArrowInvalid: CSV parse error", "tokens_in": 5200,
                                            "tokens_out": 800, "tool_calls": 7, "duration_s": 12.5})
        episode = ended["episode"]
        assert (episode["tokens_in"], episode["tokens_out"], episode["tool_calls"], episode["duration_s"]) == (
            5200, 800, 7, 12.5)
        assert ended["failure"]["new"] is True and ended["failure"]["fingerprint_id"] >= 1
        assert episode["ended_at"].endswith("Z") and episode["ended_at_epoch"] >= started["started_at_epoch"]
        await call(s, "agent_start", {"agent": "c2"})
        old = await call(s, "agent_end", {"agent": "c2", "state": "failed", "error_tool": "pyarrow",
                                          "error": "ArrowInvalid: CSV parse error"})
        assert old["failure"]["new"] is False and old["episode"]["tokens_in"] is None
        await call(s, "agent_start", {"agent": "c3"})
        assert "error is the older name of message" in await call_error(
            s, "agent_end", {"agent": "c3", "state": "failed", "tool": "t", "message": "a", "error": "b"})
        assert "tokens_in: Input should be greater than or equal to 0" in await call_error(
            s, "agent_end", {"agent": "c3", "state": "completed", "tokens_in": -1})
        # Both refusals wrote nothing: c3 still runs and can end normally.
        assert (await call(s, "agent_end", {"agent": "c3", "state": "completed"}))["changed"] is True

    drive(library_file, script)
    with Library(library_file, settings=Settings(), readonly=True) as lib:
        assert lib.episodes.get("c1").tool_calls == 7
        assert lib.episodes.get("c3").duration_s is not None  # not given: the time since agent_start


def test_fix_outcome_is_scoped_to_the_servers_own_episodes(library_file: str) -> None:
    """Issue 32 item 7: an agent reports whether the suggested fix worked, for its own episode only."""
    with Library(library_file, settings=Settings()) as lib:
        fp = lib.failures.record("http_get", "HTTP 429 Too Many Requests").fingerprint_id
        lib.failures.attach_fix(fp, summary="back off and retry", by="ops")
        lib.episodes.start("someone-else")

    async def script(s: ClientSession) -> None:
        await call(s, "agent_start", {"agent": "f1"})
        worked = await call(s, "fix_outcome", {"failure": str(fp), "worked": True, "agent": "f1"})
        assert (worked["attempts"], worked["successes"]) == (1, 1)
        failed = await call(s, "fix_outcome", {"failure": str(fp), "worked": False, "agent": "f1"})
        assert (failed["attempts"], failed["successes"]) == (2, 1)
        assert "episode 'someone-else' is neither" in await call_error(
            s, "fix_outcome", {"failure": str(fp), "worked": True, "agent": "someone-else"})
        assert "agent: required" in await call_error(s, "fix_outcome", {"failure": str(fp), "worked": True})
        assert "no failure fingerprint with id 999" in await call_error(
            s, "fix_outcome", {"failure": "999", "worked": True, "agent": "f1"})

    drive(library_file, script)
    with Library(library_file, settings=Settings(), readonly=True) as lib:
        history = lib.failures.fix_history(fp)
        assert [(h["attempts"], h["successes"]) for h in history] == [(2, 1)]
def test_memory_add_metadata_and_text_fields_are_capped_like_the_cli(tmp_path: Path) -> None:
    """Issue 33 item 5: a 5 MB metadata object was stored through memory_add while content was capped."""
    from kaos_dream.memories import MAX_METADATA_BYTES

    db = tmp_path / "lib.db"
    assert run_kaos("init", db=db).returncode == 0
    big = {"blob": "x" * (MAX_METADATA_BYTES + 1)}
    fits = {"blob": "x" * (MAX_METADATA_BYTES - 20)}

    async def script(s: ClientSession) -> None:
        assert f"the limit is {MAX_METADATA_BYTES}" in await call_error(
            s, "memory_add", {"content": "a note", "key": "big", "metadata": {"blob": "x" * 5_000_000}})
        assert f"the limit is {MAX_METADATA_BYTES}" in await call_error(
            s, "memory_add", {"content": "a note", "key": "big", "metadata": big})
        await call(s, "memory_add", {"content": "a note", "key": "fits", "metadata": fits})
        assert "kind" in await call_error(s, "memory_add", {"content": "a note", "kind": "k" * 201})
        assert "tool" in await call_error(s, "failure_record", {"tool": "t" * 201, "message": "boom"})

    drive(db, script)
    cli = run_kaos("memory", "add", "a note", "--key", "big-cli", "--meta", json.dumps(big), db=db)
    assert cli.returncode == 1 and f"the limit is {MAX_METADATA_BYTES}" in cli.stderr
    listed = json.loads(run_kaos("memory", "list", "--json", db=db).stdout)
    assert [m["key"] for m in listed] == ["fits"]  # nothing else was stored
