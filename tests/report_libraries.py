"""Libraries the report and graph-export tests look at: hostile names, and one with 10k skills."""

from __future__ import annotations

import random
from pathlib import Path

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.graph import Node

T0 = 1_767_225_600.0

HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '"><img src=x onerror="window.__pwned = 2">',
    "it's \"quoted\" & <b>bold</b>",
    "\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627 right-to-left",
    "--> <!-- ]]> </svg><script>window.__pwned = 3</script>",
    "{{7*7}} ${alert(4)} javascript:alert(5)",
]

RTL_OVERRIDE = "\u202eevil-rtl\u202c"


def hostile_library(path: Path) -> list[str]:
    """Skills, memories, agents, failures and a fix whose names try to break out of HTML, SVG and DOT."""
    clock = ManualClock(T0)
    with Library(path, clock=clock, settings=Settings()) as lib:
        skills = [lib.skills.add(name, f"does {name}").name for name in HOSTILE]
        for i, name in enumerate(HOSTILE):
            lib.memories.add(f"memory about {name}", key=f"key {name}")
            agent = f"agent {name}"[:100]
            lib.episodes.start(agent, name=name)
            lib.record_outcome(skills[i], i % 2 == 0, agent=agent, task=name)
            clock.advance(30)
            lib.episodes.fail(agent, conclusion=name, tool=f"tool{i}", error=f"Error: {name} failed")
            clock.advance(30)
        for a, b in zip(skills, skills[1:], strict=False):
            lib.graph.link(Node("skill", lib.skills.resolve_id(a)), "enabled", Node("skill", lib.skills.resolve_id(b)))
        lib.graph.link(Node("memory", 1), "fact", Node("skill", 1))
        lib.graph.link(Node("memory", 2), "fact", Node("skill", 2))
        lib.failures.attach_fix(1, summary=HOSTILE[1], skill=skills[0])
        lib.failures.record_fix_outcome(1, True, agent="fixer")
        # Control characters and bidi overrides cannot come in through the API; an older or foreign
        # writer may have left them.
        lib.conn.execute("UPDATE skills SET name = ? WHERE id = 4", (RTL_OVERRIDE,))
        lib.conn.execute("UPDATE memories SET key = ? WHERE id = 2", ("bell\x07 esc\x1b[31m red",))
        skills[3] = RTL_OVERRIDE
        lib.dream.run(apply=True)
    return skills


def big_library(path: Path, skills: int = 10_000, outcomes: int = 60_000, edges: int = 20_000, seed: int = 3) -> None:
    """A large library written in bulk through SQL (the API would take minutes): skills with
    outcomes and hits, co-occurrence and causal edges, failures with occurrences, one dream pass."""
    rng = random.Random(seed)
    clock = ManualClock(T0)
    with Library(path, clock=clock, settings=Settings()) as lib:
        conn = lib.conn
        with lib.transaction():
            conn.executemany(
                "INSERT INTO skills (id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                [(i, f"skill-{i:05d}", f"does task {i % 97} with tool {i % 13}", T0, T0) for i in range(1, skills + 1)])
            conn.executemany("INSERT INTO agents (id, state, started_at, ended_at) VALUES (?, 'completed', ?, ?)",
                             [(f"a{i}", T0 + i, T0 + i + 5) for i in range(500)])
            popular = [min(skills, int(rng.paretovariate(1.1))) for _ in range(outcomes)]
            conn.executemany(
                "INSERT INTO skill_uses (skill_id, agent_key, success, created_at) "
                "SELECT ?1, (SELECT id FROM agent_keys WHERE agent_id = ?2), ?3, ?4",
                [(s, f"a{rng.randrange(500)}", int(rng.random() < 0.7), T0 + 86_400 * 30 * i / outcomes)
                 for i, s in enumerate(popular)])
            conn.executemany(
                "INSERT INTO skill_hits (skill_id, agent_id, query, rank, created_at) VALUES (?, ?, 'q', 1, ?)",
                [(s, f"a{rng.randrange(500)}", T0) for s in popular[: outcomes // 2]])
            pairs = set()
            while len(pairs) < edges:
                a, b = rng.randint(1, skills), min(skills, int(rng.paretovariate(0.8)))
                if a != b:
                    pairs.add((a, b))
            conn.executemany(
                "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, created_at,"
                " updated_at) VALUES ('skill', ?, 'skill', ?, ?, ?, 'observed', ?, ?)",
                [(a, b, rng.choice(["co_occurs_with", "enabled", "caused"]), round(rng.random(), 3), T0, T0)
                 for a, b in sorted(pairs)])
        for i in range(40):
            agent = f"failer-{i}"
            lib.episodes.start(agent)
            lib.episodes.fail(agent, tool=f"tool{i % 4}", error=f"connection to db-{i % 4} refused")
            clock.advance(10)
        lib.dream.run(apply=True)
