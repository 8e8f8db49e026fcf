"""Issue 17 items 1-2: what reaches a shell is byte-exact, what reaches a person is neutralised.

Every test runs the real `kaos` in a subprocess on a real file; stdout is a pipe, as in
`kaos skill apply … | sh`.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

from .conftest import PROJECT_ROOT, kaos_command, run_kaos, run_kaos_in_process
from .scaling import assert_linear, children_cpu_seconds

# Clear-screen, cursor home, an OSC window title, hidden text, a C1 CSI, a bell, a carriage return.
HOSTILE = "ok\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[8mhidden\x1b[0m\x9b31m\rend\x7f"
RAW_BYTES = ("\x1b", "\x07", "\x9b", "\r", "\x7f")


def assert_neutral(text: str) -> None:
    for ch in RAW_BYTES:
        assert ch not in text, f"raw {ch!r} reached the terminal: {text!r}"
    assert "\\x1b" in text, text


def test_apply_pipe_output_is_byte_exact(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    template = "echo {a} && printf '%s\\n' {b}   # trailing  spaces  "
    assert run_kaos("skill", "add", "long", "-t", template, db=db).returncode == 0
    a, b = "x" * 150, "  y  " * 40
    r = run_kaos("skill", "apply", "long", "-p", f"a={a}", "-p", f"b={b}", db=db)
    assert r.returncode == 0, r.stderr
    expected = template.replace("{a}", a).replace("{b}", b)
    assert r.stdout == expected + "\n"  # one line, no wrapping at 80 columns, spaces kept


def test_apply_rendered_command_runs_in_sh(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    out = tmp_path / "out.txt"
    run_kaos("skill", "add", "write", "-t", "printf '%s' '{word}' > {path}", db=db)
    word = "w" * 200
    r = run_kaos("skill", "apply", "write", "-p", f"word={word}", "-p", f"path={out}", db=db)
    sh = subprocess.run(["sh"], input=r.stdout, capture_output=True, text=True, timeout=30)
    assert sh.returncode == 0, sh.stderr
    assert out.read_text() == word


def test_apply_ten_megabytes_is_linear(tmp_path: Path) -> None:
    """Rich used to wrap the rendered text: 10 MB took 47 s. CPU of the `kaos` process at 1 MB and
    10 MB, side by side: a linear apply costs at most 10x (start-up makes it less), the wrapping ~49x."""
    db = tmp_path / "k.db"
    run_kaos("skill", "add", "big", "-t", "{x}" * 100, db=db)
    results = {}

    def apply(words: int) -> None:
        value = "a b " * words  # x 100 placeholders; most of it spaces to wrap at
        results[words] = (run_kaos("skill", "apply", "big", "-p", f"x={value}", db=db, timeout=600), value)

    small = children_cpu_seconds(lambda: apply(2_500))  # 1 MB
    large = children_cpu_seconds(lambda: apply(25_000))  # 10 MB
    for r, value in results.values():
        assert r.returncode == 0, r.stderr
        assert len(r.stdout) == 100 * len(value) + 1
    assert large <= 15 * small, f"10 MB took {large:.2f} s of CPU, 1 MB {small:.2f} s"


def test_render_many_distinct_placeholders_is_linear() -> None:
    from kaos_dream.skills import render_template

    n = 40_000
    assert render_template("".join(f"{{p{i}}}" for i in range(n)), {f"p{i}": "v" for i in range(n)}) == "v" * n

    def render(count: int) -> None:  # the list-membership version took 6.6 s at 40,000
        render_template("".join(f"{{p{i}}}" for i in range(count)), {f"p{i}": "v" for i in range(count)})

    assert_linear(render, small=2_500)


def hostile_library(tmp_path: Path) -> Path:
    db = tmp_path / "k.db"
    for args in (
        ("skill", "add", "evil", "-d", HOSTILE, "-t", "run {x}"),
        ("memory", "add", HOSTILE, "--key", "evil-note"),
        ("failure", "record", "--tool", "sh", "--agent", "a1", HOSTILE),
    ):
        r = run_kaos(*args, db=db)
        assert r.returncode == 0, (args, r.stderr)
    return db


def test_human_output_neutralises_control_sequences(tmp_path: Path) -> None:
    db = hostile_library(tmp_path)
    for args in (
        ("skill", "show", "evil"), ("skill", "list"), ("memory", "show", "evil-note"), ("memory", "list"),
        ("search", "ok"), ("dream", "failures"), ("dream", "diagnose", "1"),
    ):
        r = run_kaos_in_process(*args, db=db)  # rendering is the point: the same entry, no new interpreter
        assert r.returncode == 0, (args, r.stderr)
        assert_neutral(r.stdout)


def test_alerts_and_tool_names_are_neutralised(tmp_path: Path) -> None:
    """A hostile tool name travels into the systemic-alert notes on stderr and the alert table."""
    db = tmp_path / "k.db"
    env = {"KAOS_SYSTEMIC_THRESHOLD": "2"}
    tool = "sh\x1b]0;owned\x07\x1b[2J"
    for agent in ("a1", "a2"):
        r = run_kaos("failure", "record", "--tool", tool, "--agent", agent, "boom", db=db, env=env)
        assert r.returncode == 0, r.stderr
    assert "systemic alert" in r.stderr and not any(ch in r.stdout + r.stderr for ch in RAW_BYTES)
    for args in (("dream", "systemic"), ("dream", "failures"), ("dream", "diagnose", "1")):
        r = run_kaos(*args, db=db, env=env)
        assert "\x1b" not in r.stdout + r.stderr and "\\x1b" in r.stdout + r.stderr, (args, r)


def test_json_escapes_control_characters_and_round_trips(tmp_path: Path) -> None:
    db = hostile_library(tmp_path)
    for args, pick in (
        (("skill", "show", "evil", "--json"), lambda d: d["description"]),
        (("memory", "show", "evil-note", "--json"), lambda d: d["content"]),
    ):
        r = run_kaos(*args, db=db)
        for ch in RAW_BYTES:
            assert ch not in r.stdout, (args, ch)
        assert "\\u001b" in r.stdout and "\\u009b" in r.stdout
        assert pick(json.loads(r.stdout)) == HOSTILE


def test_apply_on_a_terminal_is_neutralised(tmp_path: Path) -> None:
    """A person running `kaos skill apply` in a terminal sees the escapes, not their effect."""
    db = tmp_path / "k.db"
    run_kaos("skill", "add", "t", "-t", "echo {x}", db=db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(kaos_command() + ["--db", str(db), "skill", "apply", "t", "-p", "x=\x1b[2Jhi"],
                            stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(leader)
    shown = b"".join(chunks).decode()
    assert "\x1b[2J" not in shown and "\\x1b[2Jhi" in shown
