"""A small library that touches every table a user can fill, for round-trip and fault tests.

Written through the public API (so it follows the current schema) and with awkward values on
purpose: unicode, control characters, quotes, JSON metadata with floats, very old and very precise
timestamps.
"""

from __future__ import annotations

import hashlib

from kaos_dream import Library
from kaos_dream.graph.nodes import Node


def fill_library(lib: Library) -> dict[str, int]:
    """Add one of everything; returns a few ids the tests refer to."""
    csv = lib.skills.add("csv-to-parquet", "Convert CSV files to Parquet", "Convert {path}", ["data", "ünïcode"])
    deploy = lib.skills.add("deploy \"friday\"", "ship it\twith a tab\nand a newline; DROP TABLE skills;--", "{a}{b}")
    old = lib.skills.add("old-way", "the old procedure 🦖", "", ["legacy"])
    lib.skills.deprecate(old.id, "replaced by csv-to-parquet")
    note = lib.memories.add("staging rejects TLS 1.0 — use 1.2", kind="insight", key="staging-tls",
                            metadata={"score": 0.1 + 0.2, "nested": {"list": [1, 2.5, None, True]}, "é": "ß"})
    lib.memories.add("a plain note", key="plain")
    lib.graph.link(Node("skill", csv.id), "enabled", Node("memory", note.id), strength=1 / 3)
    lib.graph.link(Node("skill", deploy.id), "co_occurs_with", Node("skill", csv.id))
    failure = lib.failures.record("pytest", "ConnectionRefusedError: [Errno 111] connect to 10.0.0.7:5432 refused",
                                  agent=None)
    lib.failures.attach_fix(failure.fingerprint_id, summary="start the database first", skill=csv.id)
    lib.failures.record_fix_outcome(failure.fingerprint_id, True)
    intent = lib.log.intent("agent-1", "deploy service api", meta={"why": "release 1.2"})
    lib.log.vote("agent-2", intent.position, True, "looks fine")
    lib.log.decide(intent.position)
    agent = lib.episodes.start("agent-1", name="first agent").id
    lib.search("parquet csv", kind="skill", record_hits=True, agent=agent)
    lib.record_outcome(csv.id, True, agent=agent)
    lib.record_outcome(csv.id, False, agent=agent, task="convert a big file")
    lib.record_outcome(deploy.id, True)
    lib.episodes.complete(agent, citations=[("skill", "csv-to-parquet")])
    lib.dream.run(apply=False)  # a recorded run with its digest (and any proposals)
    return {"skill": csv.id, "memory": note.id, "intent": intent.position}


def build_rich_library(path: str) -> dict[str, int]:
    """The demo library (agents, outcomes with tasks, episodes, edges and coactivations, failures with
    fingerprints, diagnoses and a systemic alert, a mined policy, merge/prune proposals, deprecated
    skills, vectors) plus what the demo leaves out: a preference, a recorded graph query, an LLM cache
    row, awkward text and JSON floats. Returns the row count of every table that holds data."""
    from kaos_dream import ManualClock
    from kaos_dream.demo import build_demo_library, demo_settings
    from kaos_dream.graph.pruning import record_query
    from kaos_dream.store.jsonl import exported_counts

    build_demo_library(path)
    with Library(path, clock=ManualClock(1.8e9 + 0.123456789), settings=demo_settings()) as lib:
        old = lib.skills.add("old-way \"quoted\"", "the old procedure 🦖\twith a tab\nand a newline", "",
                             ["legacy", "ünïcode"])
        lib.skills.deprecate(old.id, "replaced")
        note = lib.memories.add("staging rejects TLS 1.0 — use 1.2", kind="insight", key="staging-tls-copy",
                                metadata={"score": 0.1 + 0.2, "nested": {"list": [1, 2.5, None, True]}, "é": "ß"})
        failure = lib.failures.record("pytest", "ConnectionRefusedError: [Errno 111] connect to 10.0.0.7:5432 "
                                      "refused", agent=None)
        lib.failures.attach_fix(failure.fingerprint_id, summary="start the database first", skill=old.id)
        lib.failures.record_fix_outcome(failure.fingerprint_id, True)
        lib.preferences.set("tone", "terse ✓")
        with lib.transaction():  # an Agent Skills package of the old skill: kept front matter, a binary file
            lib.conn.execute(
                "INSERT INTO skill_packages (skill_id, front_matter, newline, source, digest, imported_at) "
                "VALUES (?, ?, 'crlf', ?, ?, ?)",
                (old.id, '{"metadata": {"é": "ß ✓"}}', "/skills/old", "ab" * 32, 1.8e9 + 1 / 7))
            blob = b"\x00\xff\r"
            lib.conn.execute("INSERT INTO skill_files (skill_id, path, size, sha256, content) VALUES (?, ?, 3, ?, ?)",
                             (old.id, "assets/ünï.bin", hashlib.sha256(blob).hexdigest(), blob))
        record_query(lib, "tls staging", {Node("memory", note.id): 0.75}, target=Node("memory", note.id))
        with lib.transaction():
            lib.conn.execute("INSERT INTO llm_cache (key, purpose, model, answer, created_at) VALUES (?, ?, ?, ?, ?)",
                             ("k-1", "diagnose", "claude-x", '{"cause": "db down", "p": 0.875}', 1.8e9 + 1 / 3))
        lib.dream.run(apply=True)
        # Rows as its export holds them (the layout before the storage-only task tables).
        return {name: n for name, n in exported_counts(lib.conn).items() if n}
