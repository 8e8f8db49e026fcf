"""`kaos skill import --sync` from cron while agents write (issue 32 item 2): real processes, one file.

Three agent processes record outcomes on the synced skills as fast as they can while a fourth runs
`kaos skill import --sync` again and again on a tree that changes between runs (a body edited, a
folder removed and put back, a new folder). Every sync must succeed, no outcome may be lost, the
counters must add up, and the library must end up matching the tree.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kaos_dream import Library

from .conftest import PROJECT_ROOT, run_kaos
from .test_agent_skills import write_skill

WRITER = """
import os, sys
from kaos_dream import Library
db, agent, stop = sys.argv[1], sys.argv[2], sys.argv[3]
names = ["steady-a", "steady-b", "edited"]
i = 0
with Library(db) as lib:
    while not os.path.exists(stop):
        lib.record_outcome(names[i % 3], i % 4 != 0, agent=agent)
        i += 1
print(i)
"""


def test_sync_beside_three_writer_processes(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    tree = tmp_path / "tree"
    for name in ("steady-a", "steady-b", "edited", "comes-and-goes"):
        write_skill(tree, name)
    first = run_kaos("skill", "import", "--sync", str(tree), db=db)
    assert first.returncode == 0, first.stderr
    stop = tmp_path / "stop"
    env = {"PYTHONPATH": str(PROJECT_ROOT)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), f"agent-{i}", str(stop)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
               for i in range(3)]
    syncs = []
    for round_ in range(6):
        write_skill(tree, "edited", body=f"# Steps, version {round_}\n")
        if round_ % 2 == 0:
            for f in (tree / "comes-and-goes").iterdir():
                f.unlink()
            (tree / "comes-and-goes").rmdir()
        else:
            write_skill(tree, "comes-and-goes")
        write_skill(tree, f"new-{round_}")
        syncs.append(run_kaos("skill", "import", "--sync", str(tree), "--json", db=db))
    stop.touch()
    written = []
    for proc in writers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        written.append(int(out))
    assert all(n > 0 for n in written), written  # every writer wrote while the syncs ran
    for result in syncs:
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["changed"] >= 2  # edited + new-N, at least
    again = run_kaos("skill", "import", "--sync", str(tree), "--json", db=db)
    assert json.loads(again.stdout)["changed"] == 0
    with Library(db) as lib:
        assert lib.check() == []
        uses = lib.conn.execute("SELECT count(*) FROM skill_uses").fetchone()[0]
        assert uses == sum(written)  # nothing lost
        stats = lib.conn.execute("SELECT sum(uses) FROM skill_stats").fetchone()[0]
        assert stats == uses
        assert lib.skills.get("edited").template == "# Steps, version 5\n"
        edited = sum(len(range(2, n, 3)) for n in written)  # every third outcome of each writer
        assert lib.skill_record("edited")["all_time"]["uses"] == edited  # telemetry kept across edits
        assert not lib.skills.get("comes-and-goes").deprecated  # put back by the last round
        live = {s.name for s in lib.skills.list()}
        assert live == {p.name for p in tree.iterdir()}
