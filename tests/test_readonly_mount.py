"""A library on a read-only mount is named as a read-only fault (issue 33 item 8), not "unable to open
database file": writes exit 1 with one line saying the file system is read-only, reads still work.

The mount is real: a read-only bind mount of the library's folder inside a private mount namespace
(``unshare -rm``, no privilege needed where user namespaces are allowed); skipped where it is not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PROJECT_ROOT, SUITE_ENV, run_kaos


def _can_mount_read_only(folder: Path) -> bool:
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount --bind -o ro '{folder}' '{folder}'"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


def _on_read_only_mount(folder: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``folder`` bind-mounted read-only over itself, in a private mount namespace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env.update(SUITE_ENV, PYTHONPATH=str(PROJECT_ROOT))
    script = f"mount --bind -o ro '{folder}' '{folder}' && exec \"$@\""
    return subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", *argv], capture_output=True, text=True,
                          env=env, timeout=120)


def test_a_read_only_mount_is_named_as_a_read_only_fault(tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    db = folder / "kaos.db"
    assert run_kaos("init", db=db).returncode == 0
    assert run_kaos("skill", "add", "deploy-app", "--description", "deploy the app", db=db).returncode == 0
    if not _can_mount_read_only(folder):
        pytest.skip("no private mount namespace here (unshare -rm)")
    kaos = [sys.executable, "-m", "kaos_dream", "--db", str(db)]
    for args in (["skill", "add", "rotate-logs", "--description", "rotate the logs"],
                 ["record-outcome", "deploy-app", "--success"],
                 ["search", "deploy", "--record-hits"]):
        r = _on_read_only_mount(folder, kaos + args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "read-only file system" in lines[0], (args, r.stderr)
        assert "unable to open" not in r.stderr and "Traceback" not in r.stderr
    r = _on_read_only_mount(folder, kaos + ["skill", "list", "--json"])  # reads still work
    assert r.returncode == 0 and [s["name"] for s in json.loads(r.stdout)] == ["deploy-app"]
    code = ("import sys\nfrom kaos_dream import Library\nfrom kaos_dream.errors import StoreFaultError\n"
            "try:\n    Library(sys.argv[1]).skills.add('rotate-logs', 'rotate the logs')\n"
            "except StoreFaultError as fault:\n    print(fault.kind)\n")
    r = _on_read_only_mount(folder, [sys.executable, "-c", code, str(db)])
    assert r.stdout.strip() == "readonly", r.stderr
