"""Failure-intelligence benchmark: the reference scenario's validations plus a labelled error corpus.

1. Replays ``bench-data/kaos/failure_intelligence_bench.json`` (planted failures, fix downgrade,
   systemic wave, alert lifecycle, recategorisation with a custom diagnoser, CLI checks) against a
   fresh library, with the scenario's environment (threshold 3, window 60 s).
2. Extra validations of our own (read-only listings leave the file byte-identical, old timestamps
   never alert, a resolved alert does not hide the next incident).
3. The labelled corpus (``corpus.jsonl``, written by hand, dev + holdout groups) and the blind set
   (``corpus_blind.jsonl``, written after the heuristics were frozen): category accuracy from the
   heuristics alone (no LLM), and pairwise grouping precision/recall from the fingerprints the
   library actually assigns.
4. ``record``/``lookup`` latency, median and spread over repeats.

Exit status is non-zero when a validation fails or the corpus misses 90 % accuracy, precision 0.95 or
recall 0.9. ``--quick`` uses one latency repeat. ``--seed N`` moves the ten seeds that choose which 10 %
of the fingerprints a person labels to N..N+9 (default 1, the committed results).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from kaos_dream import Library, ManualClock, Settings, benchkit  # noqa: E402
from kaos_dream.failures import Diagnosis, FailureInput, cues, normalize, register_diagnoser, unregister_diagnoser  # noqa: E402
from kaos_dream.failures.diagnosis import REGISTRY  # noqa: E402
from kaos_dream.failures.fingerprint import bounded_sample, fingerprint_hash  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "bench-data"
SCENARIO = Path("kaos") / "failure_intelligence_bench.json"
T0 = 1_767_225_600.0
TARGETS = {"accuracy": 0.90, "precision": 0.95, "recall": 0.90}
# The sets written after the heuristics were frozen, oldest first. Each was blind when it was first
# measured; once its misses were looked at to widen the rules, it is a tuning set (the commit that
# widened the rules says what it measured before). The last one is the blind estimate; the goal
# (issue 16) is >= 90 % on it with the LLM off.
BLIND_SETS = (
    ("corpus_blind.jsonl", "tuning", "82.1 % before issue 16's first widening"),
    ("corpus_blind2.jsonl", "tuning", "78.1 % before the second widening (commit 6e46896)"),
    ("corpus_blind3.jsonl", "tuning", "65.7 % before the third widening"),
    ("corpus_blind4.jsonl", "tuning", "64.1 % before the fourth widening"),
    ("corpus_blind5.jsonl", "tuning", "60.3 % at first sight (after the fourth widening); in the cue audit since"),
    ("corpus_blind6.jsonl", "tuning", "89.3 % at first sight (written after the cue tier was frozen at commit "
                                      "f687919); in the cue audit and the fifth widening since"),
    ("corpus_blind7.jsonl", "tuning", "88.6 % at first sight; used for the sixth widening"),
    ("corpus_blind8.jsonl", "tuning", "85.9 % at first sight; used for the seventh widening"),
    ("corpus_blind9.jsonl", "tuning", "86.2 % at first sight; used for the eighth widening"),
    ("corpus_blind10.jsonl", "blind", "written by an independent helper after the eighth widening was frozen "
                                      "(commit 29669ed); measured only"),
)
# The sets the generic cue tier's audit reads (kaos_dream/failures/cues.py RETIRED), and over which the
# leave-one-set-out estimate of its first-sight accuracy runs: every labelled tuning set (the eighth widening
# widened the cue tier too, so blind7-9 joined it). A set written after the freeze is not in it.
CUE_AUDIT_SETS = ("corpus.jsonl", "corpus_blind.jsonl", "corpus_blind2.jsonl", "corpus_blind3.jsonl",
                  "corpus_blind4.jsonl", "corpus_blind5.jsonl", "corpus_blind6.jsonl", "corpus_blind7.jsonl",
                  "corpus_blind8.jsonl", "corpus_blind9.jsonl")
BLIND_GOAL = 0.90
# Issue 34: messages exactly as >= 40 tools print them, the same failure with different volatile parts and
# different failures that look alike (corpus_real.README.md). Written with the normalisation in view: a
# tuning set; its goals are gated. A blind set written after the freeze goes beside it.
REAL_SETS = (("corpus_real.jsonl", "tuning", "written for issue 34; first sight 81.7 %, precision 0.938, recall 0.526 "
                                             "(normalisation of commit 8d07315); ids 165-197 added in round 2, first "
                                             "sight 81.8 %, precision 1.0, recall 0.769 (commit 56edb41)"),
             ("corpus_real_blind.jsonl", "seen", "98 messages, 35 tools, 67 groups by an independent writer, blind "
                                                 "at ffda360 (94.9 %, precision 1.0, recall 0.562); its misses were "
                                                 "studied for round 2, frozen at c61d307"),
             ("corpus_real_blind2.jsonl", "blind", "written by an independent writer (who saw neither code nor data) while round 2 ended; first measured on the frozen c61d307 merged into main; measured only"))
REAL_GOALS = {"precision": 0.95, "recall": 0.90, "accuracy": 0.95, "wrong": 0.03}
# What normalising and diagnosing costs on crafted input (issue 34: 1 MB <= 0.2 s CPU)
ADVERSARIAL_UNITS = ("1.2.3.", "a.b-", "a/", "a-", "1,", "\n", "[{(", "a$")
ADVERSARIAL_SIZES = (100_000, 1_000_000)
ADVERSARIAL_BUDGET_S = 0.2
ADVERSARIAL_SMALL_SHARE = 0.10  # 100 KB may cost at most this share of the 1 MB budget
# The MCP stall (issue 34): a 9 KB crafted `failure_lookup` beside a cheap concurrent call on one real server
MCP_STALL_MESSAGE = "1.2.3." * 1500
MCP_STALL_REPEATS = 15
SERVER_CPU_CALLS = 60
LABELLED_SHARE = 0.10
LABEL_SEED = 1  # the first labelling seed (--seed); the committed results use seeds 1..10
LABEL_SAMPLES = 10


class Checks:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, phase: str, name: str, passed: bool, detail: Any = None) -> None:
        self.items.append({"phase": phase, "check": name, "passed": bool(passed), "detail": detail})

    @property
    def passed(self) -> int:
        return sum(1 for i in self.items if i["passed"])

    def failures(self) -> list[dict[str, Any]]:
        return [i for i in self.items if not i["passed"]]


def kaos(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    full["PYTHONPATH"] = str(REPO)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "kaos_dream", *args], capture_output=True, text=True, env=full, timeout=120
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def replay_scenario(spec: dict[str, Any], workdir: Path, checks: Checks) -> None:
    env = dict(spec.get("env", {}))
    settings = Settings.from_env(env)
    db = workdir / "scenario.db"
    clock = ManualClock(T0)
    with Library(db, clock=clock, settings=settings) as lib:
        for plant in spec["planted_failures"]:
            clock.advance(1)
            lib.failures.record(plant["tool"], plant["error"], agent=plant["agent_name"])
        for plant in spec["planted_failures"]:
            needle = plant["discriminator"].lower()
            rows = [r for r in lib.failures.list(min_count=1) if needle in r["example"].lower()]
            name = plant["agent_name"]
            checks.add("planted", f"{name}: fingerprint exists", len(rows) == 1, len(rows))
            row = rows[0] if rows else {}
            checks.add(
                "planted",
                f"{name}: category == {plant['expected_category']}",
                row.get("category") == plant["expected_category"],
                row.get("category"),
            )
            checks.add("planted", f"{name}: root cause", bool(row.get("root_cause")), row.get("diagnoser"))
            checks.add("planted", f"{name}: suggested action", bool(row.get("suggested_action")), None)
            checks.add(
                "planted",
                f"{name}: method heuristic",
                row.get("diagnostic_method") == "heuristic",
                row.get("diagnostic_method"),
            )

        fix_spec = spec["fix_outcome_phase"]
        first = lib.conn.execute("SELECT id FROM failure_fingerprints ORDER BY id LIMIT 1").fetchone()[0]
        lib.failures.attach_fix(first, summary=fix_spec["attach_fix"])
        outcomes = fix_spec["outcomes"]
        for attempt, ok in enumerate(outcomes, start=1):
            clock.advance(1)
            result = lib.failures.record_fix_outcome(first, ok)
            expected = attempt >= 5
            checks.add(
                "fix",
                f"attempt {attempt}: downgraded is {expected}",
                result["downgraded"] == expected,
                result["downgraded"],
            )
        checks.add(
            "fix",
            "fix summary cleared after downgrade",
            lib.failures.get(first)["fix_summary"] is None,
            lib.failures.get(first)["fix_summary"],
        )

        wave = spec["systemic_phase"]["wave"]
        before = lib.conn.execute("SELECT COUNT(*) FROM systemic_alerts").fetchone()[0]
        for hit in wave:
            clock.advance(1)
            lib.failures.record(hit["tool"], hit["error"], agent=hit["agent_name"])
        after = lib.conn.execute("SELECT COUNT(*) FROM systemic_alerts").fetchone()[0]
        fp = lib.failures.lookup(wave[0]["tool"], wave[0]["error"])
        fp_alerts = [
            a for a in lib.failures.alerts(include_resolved=True) if a["fingerprint_id"] == fp.fingerprint_id
        ]
        active = lib.failures.active_alerts()
        checks.add("systemic", "alert count increases", after > before, {"before": before, "after": after})
        checks.add("systemic", "exactly one alert for the fingerprint", len(fp_alerts) == 1, len(fp_alerts))
        checks.add(
            "systemic",
            "alert agent_count >= threshold",
            bool(fp_alerts) and fp_alerts[0]["agent_count"] >= settings.systemic_threshold,
            fp_alerts[0]["agent_count"] if fp_alerts else None,
        )
        checks.add("systemic", "active alerts listed", bool(active), len(active))
        checks.add("systemic", "active alert has a root cause", bool(active) and bool(active[0]["root_cause"]), None)

        alert_id = fp_alerts[0]["id"] if fp_alerts else -1
        checks.add("lifecycle", "ack returns True", lib.failures.ack_alert(alert_id, by="scenario") is True, None)
        acked = [a for a in lib.failures.alerts(include_resolved=True) if a["id"] == alert_id][0]
        checks.add(
            "lifecycle",
            "acked_at set and acked_by == scenario",
            acked["acked_at"] is not None and acked["acked_by"] == "scenario",
            acked["acked_by"],
        )
        checks.add(
            "lifecycle",
            "acked alert still active",
            any(a["id"] == alert_id for a in lib.failures.active_alerts()),
            acked["status"],
        )
        checks.add(
            "lifecycle", "resolve returns True", lib.failures.resolve_alert(alert_id, by="scenario") is True, None
        )
        checks.add(
            "lifecycle",
            "resolved alert not active",
            not any(a["id"] == alert_id for a in lib.failures.active_alerts()),
            None,
        )

        plant = spec["recategorise_phase"]["plant"]
        clock.advance(1)
        rec = lib.failures.record(plant["tool"], plant["error"], agent=plant["agent_name"])
        checks.add(
            "recategorise",
            "mystery failure starts unknown",
            rec.diagnosis.category == "unknown",
            rec.diagnosis.category,
        )

        def mystery(failure: FailureInput) -> Diagnosis | None:
            if "CustomMysteryException" in failure.message:
                return Diagnosis("code", "zzfoo raised its custom exception", "Fix the zzfoo call site", 0.9)
            return None

        register_diagnoser("scenario-mystery", mystery)
        try:
            changed = lib.failures.recategorize(use_llm=False)
        finally:
            unregister_diagnoser("scenario-mystery")
        checks.add("recategorise", "recategorize returns 1", changed == 1, changed)
        checks.add(
            "recategorise",
            "category becomes code",
            lib.failures.get(rec.fingerprint_id)["category"] == "code",
            lib.failures.get(rec.fingerprint_id)["category"],
        )

    proc = kaos("--json", "dream", "failures", "--db", str(db), "--min-count", "1")
    checks.add("cli", "dream failures exits 0", proc.returncode == 0, proc.stderr.strip()[:200])
    listed = json.loads(proc.stdout) if proc.returncode == 0 else None
    checks.add(
        "cli",
        "dream failures lists categories",
        isinstance(listed, list) and bool(listed) and all("category" in r for r in listed),
        None,
    )
    first_id = str(listed[-1]["id"] if listed else 1)
    first_id = str(min(r["id"] for r in listed)) if listed else "1"
    proc = kaos("--json", "dream", "diagnose", first_id, "--db", str(db))
    checks.add("cli", "dream diagnose exits 0", proc.returncode == 0, proc.stderr.strip()[:200])
    shown = json.loads(proc.stdout) if proc.returncode == 0 else None
    checks.add("cli", "dream diagnose shows a category", isinstance(shown, dict) and "category" in shown, None)
    proc = kaos("--json", "dream", "systemic", "--db", str(db))
    checks.add("cli", "dream systemic exits 0", proc.returncode == 0, proc.stderr.strip()[:200])
    checks.add(
        "cli", "dream systemic returns a list", proc.returncode == 0 and isinstance(json.loads(proc.stdout), list), None
    )


def extra_validations(workdir: Path, checks: Checks) -> None:
    db = workdir / "extra.db"
    clock = ManualClock(T0)
    settings = Settings(systemic_threshold=5, systemic_window_s=120)
    with Library(db, clock=clock, settings=settings) as lib:
        for i in range(5):
            lib.failures.record(
                "etl",
                "psql: error: connection to server failed: Connection refused",
                agent=f"old-{i}",
                at=T0 - 86_400 + i,
            )
        checks.add(
            "extra",
            "five agents timestamped a day ago raise no alert",
            not lib.failures.alerts(include_resolved=True),
            None,
        )
        raised = []
        for i in range(6):
            clock.advance(2)
            raised.append(
                lib.failures.record(
                    "etl", "psql: error: connection to server failed: Connection refused", agent=f"now-{i}"
                ).alert_id
            )
        checks.add(
            "extra",
            "five agents within the window raise exactly one alert",
            sum(1 for a in raised if a is not None) == 1 and raised[4] is not None,
            raised,
        )
        alert = lib.failures.alerts()[0]["id"]
        lib.failures.resolve_alert(alert, by="bench")
        clock.advance(1)
        again = lib.failures.record(
            "etl", "psql: error: connection to server failed: Connection refused", agent="now-0"
        )
        checks.add("extra", "resolving does not re-raise for the same wave", again.alert_id is None, again.alert_id)
        clock.advance(600)
        second = [
            lib.failures.record(
                "etl", "psql: error: connection to server failed: Connection refused", agent=f"wave2-{i}"
            ).alert_id
            for i in range(5)
        ]
        checks.add(
            "extra",
            "a new incident after resolution raises a new alert",
            sum(1 for a in second if a is not None) == 1,
            second,
        )
    before = digest(db)
    for args in (
        ["dream", "failures"],
        ["dream", "systemic", "--all"],
        ["dream", "diagnose", "1"],
        ["failure", "lookup", "--tool", "etl", "Connection refused"],
        ["dream", "fix", "show", "1"],
    ):
        proc = kaos("--json", "--db", str(db), *args)
        checks.add(
            "extra",
            f"`kaos {' '.join(args)}` exits 0 and leaves the file unchanged",
            proc.returncode == 0 and digest(db) == before,
            proc.stderr.strip()[:200],
        )
    proc = kaos("--db", str(db), "alerts", "check")
    checks.add(
        "extra",
        "`kaos alerts check` exits 3 while an alert is open, file unchanged",
        proc.returncode == 3 and digest(db) == before and "systemic alert" in proc.stderr,
        proc.returncode,
    )


def load_corpus(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def evaluate_corpus(rows: list[dict[str, Any]], workdir: Path, name: str) -> dict[str, Any]:
    """Heuristic category accuracy and pairwise grouping quality, measured through the library."""
    db = workdir / f"{name}.db"
    clock = ManualClock(T0)
    predicted: list[str] = []
    by_cue: list[bool] = []  # answered by the generic cue tier (the specific rules said nothing)
    specific_only: list[str] = []  # what the specific rules alone would say
    fingerprints: list[int] = []
    with Library(db, clock=clock, settings=Settings(llm=False)) as lib:
        for row in rows:
            clock.advance(1)
            norm = normalize(row["message"])
            failure = FailureInput(row["tool"], norm.key_lines, row["message"], norm.exception_type)
            specific = REGISTRY.diagnose(failure)
            found = specific or cues.generic_diagnosis(failure)
            predicted.append(found.category if found else "unknown")
            specific_only.append(specific.category if specific else "unknown")
            by_cue.append(bool(found and found.diagnoser and found.diagnoser.startswith(cues.DIAGNOSER_PREFIX)))
            fingerprints.append(lib.failures.record(row["tool"], row["message"]).fingerprint_id)
    by_split: dict[str, list[bool]] = defaultdict(list)
    confusion: Counter[tuple[str, str]] = Counter()
    misses = []
    for row, got in zip(rows, predicted, strict=True):
        ok = got == row["category"]
        by_split[row.get("split", "all")].append(ok)
        by_split["all"].append(ok)
        confusion[(row["category"], got)] += 1
        if not ok:
            misses.append({"id": row["id"], "group": row["group"], "expected": row["category"], "got": got})
    tp = fp = fn = 0
    split_pairs: list[dict[str, Any]] = []
    for i, j in combinations(range(len(rows)), 2):
        same_group = rows[i]["group"] == rows[j]["group"]
        same_fp = fingerprints[i] == fingerprints[j]
        if same_group and same_fp:
            tp += 1
        elif same_fp:
            fp += 1
        elif same_group:
            fn += 1
            split_pairs.append({"group": rows[i]["group"], "ids": [rows[i]["id"], rows[j]["id"]]})
    return {
        "messages": len(rows),
        "groups": len({r["group"] for r in rows}),
        "tools": len({r["tool"] for r in rows}),
        "categories": dict(Counter(r["category"] for r in rows)),
        "accuracy": {k: round(sum(v) / len(v), 4) for k, v in sorted(by_split.items())},
        "accuracy_counts": {k: [sum(v), len(v)] for k, v in sorted(by_split.items())},
        "grouping": {
            "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
            "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
            "true_pairs": tp,
            "false_merges": fp,
            "missed_pairs": fn,
            "fingerprints": len(set(fingerprints)),
        },
        "confusion": {f"{a}->{b}": n for (a, b), n in sorted(confusion.items())},
        "unknown_share": round(sum(1 for p in predicted if p == "unknown") / len(rows), 4),
        "specific_rules_alone": _shares([r["category"] for r in rows], specific_only),
        "cue_tier": {"answered": sum(by_cue), "right": sum(1 for r, p, c in zip(rows, predicted, by_cue, strict=True)
                                                              if c and p == r["category"])},
        "wrong_category_share": round(sum(1 for r, p in zip(rows, predicted, strict=True)
                                          if p not in ("unknown", r["category"])) / len(rows), 4),
        "misclassified": misses,
        "split_groups": split_pairs,
    }


def _cue_view(rows: list[dict[str, Any]]) -> list[tuple[str, str | None, list[cues.Match]]]:
    """Per message: its true category, the specific rules' category (None when they say nothing) and
    every generic cue that matches it (retired or not)."""
    out = []
    for row in rows:
        norm = normalize(row["message"])
        failure = FailureInput(row["tool"], norm.key_lines, row["message"], norm.exception_type)
        found = REGISTRY.diagnose(failure)
        out.append((row["category"], found.category if found else None, cues.matches(failure, cues.CUES)))
    return out


def _shares(truth: list[str], got: list[str]) -> dict[str, float]:
    n = len(truth)
    return {
        "accuracy": round(sum(t == g for t, g in zip(truth, got, strict=True)) / n, 4),
        "unknown": round(sum(g == "unknown" for g in got) / n, 4),
        "wrong": round(sum(g not in ("unknown", t) for t, g in zip(truth, got, strict=True)) / n, 4),
    }


def cue_cross_validation(sets: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Leave-one-set-out estimate of the generic cue tier's first-sight accuracy: for each set, the cue
    audit (:func:`kaos_dream.failures.cues.audit`) runs on the other sets only, and the held-out set is
    categorised by the specific rules, then the cues that audit kept. Beside it: the specific rules
    alone, and the cue tier alone (as if there were no specific rules). Also checks that the audit over
    every set retires exactly the cues the library ships as retired (``cues.RETIRED``)."""
    views = {name: _cue_view(rows) for name, rows in sets}

    def predict(specific: str | None, found: list[cues.Match], retired: frozenset[str]) -> str:
        if specific is not None:
            return specific
        chosen = cues.decide([m for m in found if m.cue.name not in retired])
        return chosen.cue.category if chosen else "unknown"

    folds = []
    for held, _ in sets:
        train = [(found, truth) for name, view in views.items() if name != held for truth, _, found in view]
        retired = cues.audit(train)
        view = views[held]
        truth = [t for t, _, _ in view]
        folds.append({
            "held_out": held, "messages": len(view), "retired": sorted(retired),
            "specific_only": _shares(truth, [s or "unknown" for _, s, _ in view]),
            "with_cues": _shares(truth, [predict(s, f, retired) for _, s, f in view]),
            "cues_alone": _shares(truth, [predict(None, f, retired) for _, _, f in view]),
        })
    every = cues.audit([(found, truth) for view in views.values() for truth, _, found in view])
    return {
        "sets": [name for name, _ in sets], "folds": folds, "candidates": len(cues.CUES),
        "audit_rule": {"min_fired": cues.AUDIT_MIN_FIRED, "min_right": cues.AUDIT_MIN_RIGHT},
        "retired_by_audit_of_every_set": sorted(every), "shipped_retired": sorted(cues.RETIRED),
        "shipped_matches_audit": every == cues.RETIRED,
    }


def adversarial_cpu(repeats: int = 3) -> dict[str, dict[str, Any]]:
    """CPU seconds to normalise and diagnose crafted messages (what `failures.record` does before its
    transaction), per size: the median and max over the crafted units, each the best of ``repeats``."""
    def work(message: str) -> None:
        norm = normalize(message)
        failure = FailureInput("t", norm.key_lines[:2000], bounded_sample(message, 2000), norm.exception_type)
        _ = REGISTRY.diagnose(failure) or cues.generic_diagnosis(failure)

    work("warm up")
    out: dict[str, dict[str, Any]] = {}
    for size in ADVERSARIAL_SIZES:
        costs = []
        for unit in ADVERSARIAL_UNITS:
            message = unit * (size // len(unit)) + "x"
            best = float("inf")
            for _ in range(repeats):
                start = time.process_time()
                work(message)
                best = min(best, time.process_time() - start)
            costs.append(best)
        out[str(size)] = {"cpu_s_median": round(statistics.median(costs), 4), "cpu_s_max": round(max(costs), 4),
                          "cpu_s_min": round(min(costs), 4), "units": len(costs)}
    return out


def mcp_stall(workdir: Path, repeats: int) -> dict[str, Any]:
    """How long a 9 KB crafted `failure_lookup` holds up a cheap call sent beside it to one real MCP server
    (``kaos mcp serve`` over stdio). Per repeat: the cheap call's round trip alone, then with the lookup
    sent just before it; the delay is the difference of their medians. Beside it, the lookup's own CPU
    time in this process (median of the repeats). Goal: delay <= the lookup's CPU time."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from kaos_dream import agent_tools

    db = workdir / "mcp-stall.db"
    with Library(db, settings=Settings(llm=False)) as lib:
        lib.failures.record("http_get", "HTTP 429 Too Many Requests")
        cpu = []
        for _ in range(repeats):
            start = time.process_time()
            agent_tools.failure_lookup(lib, "t", MCP_STALL_MESSAGE)
            cpu.append(time.process_time() - start)
    params = StdioServerParameters(command=sys.executable, args=["-m", "kaos_dream", "--db", str(db), "mcp", "serve"],
                                   env={**os.environ, "PYTHONPATH": str(REPO), "ANTHROPIC_API_KEY": ""})
    cheap = ("failure_lookup", {"tool": "http_get", "message": "HTTP 429 Too Many Requests"})
    crafted = ("failure_lookup", {"tool": "t", "message": MCP_STALL_MESSAGE})

    def server_cpu() -> float:
        """CPU seconds used so far by this process's `kaos mcp serve` child (from /proc)."""
        total = 0.0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat[1]) == os.getpid() and b"mcp\x00serve" in cmdline:
                total += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
        return total

    async def measure() -> tuple[list[float], list[float], int, float]:
        alone: list[float] = []
        beside: list[float] = []
        errors = 0
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                for name, arguments in (cheap, crafted):  # warm both paths
                    await session.call_tool(name, arguments)
                # the server's own CPU per crafted lookup (MCP framing, validation, normalising, the query),
                # over enough calls that the clock tick (10 ms) is small beside the total
                before = server_cpu()
                for _ in range(SERVER_CPU_CALLS):
                    await session.call_tool(*crafted)
                per_lookup = (server_cpu() - before) / SERVER_CPU_CALLS

                async def timed(out: list[float]) -> None:
                    nonlocal errors
                    start = time.perf_counter()
                    result = await session.call_tool(*cheap)
                    out.append(time.perf_counter() - start)
                    errors += int(bool(result.is_error))

                async def lookup() -> None:
                    nonlocal errors
                    result = await session.call_tool(*crafted)
                    errors += int(bool(result.is_error))

                for _ in range(repeats):
                    await timed(alone)
                    async with anyio.create_task_group() as group:
                        group.start_soon(lookup)
                        await anyio.sleep(0)  # the lookup is sent first
                        group.start_soon(timed, beside)
        return alone, beside, errors, per_lookup

    alone, beside, errors, server_lookup_cpu = anyio.run(measure)
    delay = max(0.0, statistics.median(beside) - statistics.median(alone))
    lookup_cpu = statistics.median(cpu)
    return {
        "server_cpu_ms_per_lookup": round(server_lookup_cpu * 1000, 2),
        "server_cpu_calls": SERVER_CPU_CALLS,
        "message_chars": len(MCP_STALL_MESSAGE), "repeats": repeats, "errors": errors,
        "alone_ms_median": round(statistics.median(alone) * 1000, 2),
        "alone_ms_min_max": [round(min(alone) * 1000, 2), round(max(alone) * 1000, 2)],
        "beside_lookup_ms_median": round(statistics.median(beside) * 1000, 2),
        "beside_lookup_ms_min_max": [round(min(beside) * 1000, 2), round(max(beside) * 1000, 2)],
        "delay_ms_median": round(delay * 1000, 2),
        "lookup_cpu_ms_median": round(lookup_cpu * 1000, 2),
        "lookup_cpu_ms_min_max": [round(min(cpu) * 1000, 2), round(max(cpu) * 1000, 2)],
        "load_avg_1m": round(os.getloadavg()[0], 2),
        # its own CPU time: what the server spends on the lookup call (the library's share is lookup_cpu)
        "met": errors == 0 and delay <= server_lookup_cpu,
    }


def fingerprint_of(row: dict[str, Any]) -> str:
    return fingerprint_hash(row["tool"], normalize(row["message"]))


def learned_effect(rows: list[dict[str, Any]], workdir: Path, name: str, seeds: list[int]) -> dict[str, Any]:
    """Category accuracy before and after a person labels a seeded 10 % of the fingerprints by hand.

    Per seed: a fresh library; the first message of each chosen fingerprint is recorded and its
    category set by hand (``lib.failures.diagnose``, the library call behind `kaos dream diagnose`);
    then every other message is recorded in order, and the category the library gives it (heuristics,
    then the nearest hand-labelled fingerprint, LLM off) is compared with the label. Accuracy is over
    the messages of the fingerprints nobody labelled, beside the same messages with no labels at all."""
    order: list[str] = []
    for row in rows:
        if (fp := fingerprint_of(row)) not in order:
            order.append(fp)
    baseline = _categories_after_labels(rows, set(), workdir / f"{name}-nolabels.db")
    per_seed = []
    for seed in seeds:
        chosen = set(random.Random(f"labels/{seed}").sample(order, max(1, round(len(order) * LABELLED_SHARE))))
        got = _categories_after_labels(rows, chosen, workdir / f"{name}-labels-{seed}.db")
        rest = [i for i, row in enumerate(rows) if fingerprint_of(row) not in chosen]
        learned = [i for i in rest if got[i][1]]
        per_seed.append({
            "seed": seed, "labelled_fingerprints": len(chosen), "messages": len(rest),
            "accuracy_before": sum(baseline[i][0] == rows[i]["category"] for i in rest) / len(rest),
            "accuracy_after": sum(got[i][0] == rows[i]["category"] for i in rest) / len(rest),
            "learned_labels": len(learned),
            "learned_correct": sum(got[i][0] == rows[i]["category"] for i in learned),
        })
    return {
        "labelled_share": LABELLED_SHARE, "seeds": list(seeds), "fingerprints": len(order),
        "accuracy_before_median": statistics.median(r["accuracy_before"] for r in per_seed),
        "accuracy_after_median": statistics.median(r["accuracy_after"] for r in per_seed),
        "accuracy_after_min": min(r["accuracy_after"] for r in per_seed),
        "accuracy_after_max": max(r["accuracy_after"] for r in per_seed),
        "learned_labels_total": sum(r["learned_labels"] for r in per_seed),
        "learned_correct_total": sum(r["learned_correct"] for r in per_seed),
        "per_seed": per_seed,
    }


def _categories_after_labels(rows: list[dict[str, Any]], chosen: set[str], db: Path) -> list[tuple[str, bool]]:
    """(category, learned from a label?) the library gives each message after the ``chosen``
    fingerprints were labelled by hand with their true category."""
    clock = ManualClock(T0)
    with Library(db, clock=clock, settings=Settings(llm=False)) as lib:
        for fp in sorted(chosen, key=lambda f: next(i for i, r in enumerate(rows) if fingerprint_of(r) == f)):
            row = next(r for r in rows if fingerprint_of(r) == fp)
            clock.advance(1)
            rec = lib.failures.record(row["tool"], row["message"])
            lib.failures.diagnose(rec.fingerprint_id, category=row["category"], by="bench")
        out = []
        for row in rows:
            clock.advance(1)
            rec = lib.failures.record(row["tool"], row["message"])
            fp = lib.failures.get(rec.fingerprint_id)
            out.append((fp["category"], fp["learned_from"] is not None))
    return out


def latency(rows: list[dict[str, Any]], workdir: Path, repeats: int) -> dict[str, Any]:
    """Per-call latency of record (new and repeated fingerprints) and lookup on a real file."""
    runs: dict[str, list[float]] = defaultdict(list)
    for rep in range(repeats):
        db = workdir / f"latency-{rep}.db"
        with Library(db, clock=ManualClock(T0), settings=Settings(llm=False)) as lib:
            for op in ("record_first", "record_again", "lookup"):
                samples = []
                for row in rows:
                    start = time.perf_counter()
                    if op == "lookup":
                        lib.failures.lookup(row["tool"], row["message"])
                    else:
                        lib.failures.record(row["tool"], row["message"], agent="bench")
                    samples.append((time.perf_counter() - start) * 1e6)
                samples.sort()
                runs[f"{op}_p50_us"].append(statistics.median(samples))
                runs[f"{op}_p99_us"].append(samples[min(len(samples) - 1, int(len(samples) * 0.99))])
    return {
        key: {
            "median": round(statistics.median(v), 1),
            "min": round(min(v), 1),
            "max": round(max(v), 1),
            "repeats": len(v),
        }
        for key, v in sorted(runs.items())
    }


def write_markdown(path: Path, results: dict[str, Any]) -> None:
    s = results["scenario"]
    c = results["corpus"]
    g = results["blind_goal"]
    lines = [
        "# Failure-intelligence benchmark",
        "",
        "Produced by `python demo_failure_intelligence_bench/run.py`; every number below is from that run.",
        "",
        f"* Scenario validations: **{s['passed']} / {s['total']}**" + ("" if s["available"] else " (data not found)"),
        f"* Extra validations: **{results['extra']['passed']} / {results['extra']['total']}**",
        f"* Corpus: {c['messages']} messages, {c['groups']} groups; heuristic category accuracy "
        f"**{c['accuracy']['all']:.1%}** (dev {c['accuracy'].get('dev', 0):.1%}, holdout "
        f"{c['accuracy'].get('holdout', 0):.1%}); grouping precision **{c['grouping']['precision']:.3f}**, "
        f"recall **{c['grouping']['recall']:.3f}** (targets 90 % / 0.95 / 0.90)",
        f"* Goal on the newest set (`{g['file']}`, status *{g['status']}*"
        + ("" if g["status"] == "blind" else ": its misses were used to widen the rules, so this is not a blind "
           "measurement")
        + f", LLM off): category accuracy **{g['accuracy']:.1%}** "
        f"(goal {g['required']:.0%}: {'met' if g['met'] else 'MISSED'}), {g['unknown_share']:.1%} of its messages "
        f"`unknown`, {g['wrong_category_share']:.1%} a wrong category (the specific rules alone: "
        f"{g['specific_rules_alone']['accuracy']:.1%}, {g['specific_rules_alone']['unknown']:.1%} unknown, "
        f"{g['specific_rules_alone']['wrong']:.1%} wrong); after a person labels 10 % of its fingerprints: "
        f"{g['accuracy_after_labelling_10pct']:.1%} "
        "(median over seeds, on the messages nobody labelled)",
        "* Note: the dev/holdout split of `corpus.jsonl` is not blind — the heuristics were improved with every "
        "corpus message in view. Each `corpus_blind*.jsonl` was written after the rules were frozen and measured "
        "before anyone looked at its misses; a set whose misses were then used to widen the rules is marked "
        "*tuning* below (its first-sight accuracy is in the note).",
        "",
        "## Sets written after the rules were frozen",
        "",
        "| set | status | messages | accuracy | unknown | wrong category | grouping precision / recall "
        "| accuracy before → after labelling 10 % (median, min–max after) | learned labels right "
        "| answered by the cue tier (right) | specific rules alone: accuracy / unknown / wrong | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for b in results["blind_sets"]:
        le, so = b["learned"], b["specific_rules_alone"]
        lines.append(
            f"| `{b['file']}` | {b['status']} | {b['messages']} | {b['accuracy']['all']:.1%} "
            f"| {b['unknown_share']:.1%} "
            f"| {b['wrong_category_share']:.1%} | {b['grouping']['precision']:.3f} / {b['grouping']['recall']:.3f} "
            f"| {le['accuracy_before_median']:.1%} → {le['accuracy_after_median']:.1%} "
            f"({le['accuracy_after_min']:.1%}–{le['accuracy_after_max']:.1%}) "
            f"| {le['learned_correct_total']} / {le['learned_labels_total']} "
            f"| {b['cue_tier']['answered']} ({b['cue_tier']['right']}) "
            f"| {so['accuracy']:.1%} / {so['unknown']:.1%} / {so['wrong']:.1%} | {b['note']} |"
        )
    lines += ["", "## Real-style messages (issue 34)", "",
              "Goals: grouping precision >= 0.95 and recall >= 0.90, category accuracy >= 95 % with the LLM off, "
              "wrong <= 3 %.", "",
              "| set | status | messages | tools | groups | accuracy | unknown | wrong | precision / recall "
              "| false merges | missed pairs | note |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["real_sets"]:
        lines.append(f"| `{r['file']}` | {r['status']} | {r['messages']} | {r.get('tools', '')} | {r['groups']} "
                     f"| {r['accuracy']['all']:.1%} | {r['unknown_share']:.1%} | {r['wrong_category_share']:.1%} "
                     f"| {r['grouping']['precision']:.3f} / {r['grouping']['recall']:.3f} "
                     f"| {r['grouping']['false_merges']} | {r['grouping']['missed_pairs']} | {r['note']} |")
    lines += ["", "## Confusion pairs (expected -> got, every set; the diagonal left out)", ""]
    for r in [results["corpus"] | {"file": "corpus.jsonl"}, *results["blind_sets"], *results["real_sets"]]:
        pairs = [f"{k} {n}" for k, n in r["confusion"].items() if k.split("->")[0] != k.split("->")[1]]
        lines.append(f"* `{r['file']}`: " + (", ".join(pairs) if pairs else "none"))
    lines += ["", "## CPU to normalise and diagnose a crafted message (best of 3 per unit; median and max over "
              f"{len(ADVERSARIAL_UNITS)} units: {', '.join(repr(u) for u in ADVERSARIAL_UNITS)})", "",
              f"Goals: 1,000,000 characters <= {ADVERSARIAL_BUDGET_S} s CPU, 100,000 <= "
              f"{ADVERSARIAL_SMALL_SHARE * ADVERSARIAL_BUDGET_S:.2f} s ({ADVERSARIAL_SMALL_SHARE:.0%} of that budget). "
              "The message is bounded before any pattern runs, so past the bound the cost is flat.", "",
              "| size (chars) | median s | min s | max s |", "|---|---|---|---|"]
    for size, v in results["adversarial_cpu"].items():
        lines.append(f"| {int(size):,} | {v['cpu_s_median']:.4f} | {v.get('cpu_s_min', 0):.4f} "
                     f"| {v['cpu_s_max']:.4f} |")
    stall = results.get("mcp_stall")
    if stall:
        lines += ["", f"## MCP stall: a {stall['message_chars']:,}-character crafted `failure_lookup` beside a "
                  f"cheap call (one real `kaos mcp serve` over stdio, {stall['repeats']} repeats, load average "
                  f"{stall['load_avg_1m']})", "",
                  "| measure | median ms | min–max ms |", "|---|---|---|",
                  f"| cheap call alone | {stall['alone_ms_median']} | {stall['alone_ms_min_max'][0]}–"
                  f"{stall['alone_ms_min_max'][1]} |",
                  f"| cheap call sent just after the lookup | {stall['beside_lookup_ms_median']} | "
                  f"{stall['beside_lookup_ms_min_max'][0]}–{stall['beside_lookup_ms_min_max'][1]} |",
                  f"| delay (difference of the medians) | {stall['delay_ms_median']} | |",
                  f"| the lookup's CPU in the server (mean over {stall['server_cpu_calls']} calls) | "
                  f"{stall['server_cpu_ms_per_lookup']} | |",
                  f"| the lookup's CPU in the library alone | {stall['lookup_cpu_ms_median']} | "
                  f"{stall['lookup_cpu_ms_min_max'][0]}–{stall['lookup_cpu_ms_min_max'][1]} |", "",
                  f"Goal (delay <= the lookup's CPU in the server): **{'met' if stall['met'] else 'missed'}**, "
                  f"{stall['errors']} tool errors. The server answers one call at a time, so the delay is the "
                  "lookup's wall time there; on a loaded machine that exceeds its CPU time."]
    cv = results["cue_cross_validation"]
    lines += [
        "",
        "## Generic cue tier: leave-one-set-out estimate of first-sight accuracy",
        "",
        f"The second diagnosis tier (`kaos_dream/failures/cues.py`, {cv['candidates']} candidate cues in families) "
        "answers only where the specific rules say nothing. A cue is retired when it took part in at least "
        f"{cv['audit_rule']['min_fired']} decisions on the labelled sets and was right in fewer than "
        f"{cv['audit_rule']['min_right']:.0%} of them. For each held-out set below, that audit ran on the "
        "other sets only; the held-out set was then categorised with the LLM off. *Cues alone* is the tier "
        "without the specific rules in front of it. Every set here was in view when the cues and the specific "
        "rules were last widened (issue 16 §4: general families only, no rule for one message), so no fold is "
        "first sight: the folds say how much each set leans on cues the others would retire. A set written "
        "after the rules were frozen is the clean test (the table above, status *blind*).",
        "",
        "| held-out set | messages | cues retired | specific rules: accuracy / unknown / wrong "
        "| with cues: accuracy / unknown / wrong | cues alone: accuracy / unknown / wrong |",
        "|---|---|---|---|---|---|",
    ]
    for f in cv["folds"]:
        cells = [f"{f[k]['accuracy']:.1%} / {f[k]['unknown']:.1%} / {f[k]['wrong']:.1%}"
                 for k in ("specific_only", "with_cues", "cues_alone")]
        lines.append(f"| `{f['held_out']}` | {f['messages']} | {len(f['retired'])} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Audit of every labelled set retires: {', '.join(f'`{n}`' for n in cv['retired_by_audit_of_every_set'])} "
        f"({'the same as' if cv['shipped_matches_audit'] else 'DIFFERENT FROM'} `cues.RETIRED`).",
    ]
    lines += [
        "",
        "## Latency (µs, median of per-repeat values; min–max across repeats)",
        "",
        "| measure | median | min | max |",
        "|---|---|---|---|",
    ]
    for key, v in results["latency"].items():
        lines.append(f"| {key} | {v['median']} | {v['min']} | {v['max']} |")
    lines += ["", "## Corpus misclassifications", ""]
    lines += [f"* #{m['id']} {m['group']}: expected {m['expected']}, got {m['got']}" for m in c["misclassified"]] or [
        "none"
    ]
    for b in results["blind_sets"]:
        lines += ["", f"## `{b['file']}` misclassifications", ""]
        lines += [
            f"* #{m['id']} {m['group']}: expected {m['expected']}, got {m['got']}" for m in b["misclassified"]
        ] or ["none"]
    failed = [i for i in s["checks"] + results["extra"]["checks"] if not i["passed"]]
    lines += ["", "## Failed validations", ""] + (
        [f"* {i['phase']}: {i['check']} ({i['detail']})" for i in failed] or ["none"]
    )
    path.write_text("\n".join(lines) + "\n", "utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="bench-data folder")
    parser.add_argument("--quick", action="store_true", help="one latency repeat (well under a minute)")
    parser.add_argument("--out", type=Path, default=HERE, help="where results.json / results.md go")
    benchkit.add_standard_args(parser, here=HERE, data=DEFAULT_DATA, seed=LABEL_SEED)  # --seed (labelling), --junit
    args = parser.parse_args(argv)
    label_seeds = benchkit.seed_sweep(args, LABEL_SAMPLES)
    stem = "results.quick" if args.quick else "results"  # a quick run never overwrites the full results
    repeats = 1 if args.quick else 5
    scenario_checks, extra_checks = Checks(), Checks()
    results: dict[str, Any] = {"quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="kaos-failure-bench-") as tmp:
        work = Path(tmp)
        scenario_path = args.data / SCENARIO
        available = scenario_path.exists()
        if available:
            spec = json.loads(scenario_path.read_text("utf-8"))
            replay_scenario(spec, work, scenario_checks)
        else:
            print(f"scenario data not found at {scenario_path}: skipping the replay, running the rest")
        extra_validations(work, extra_checks)
        corpus = load_corpus(HERE / "corpus.jsonl")
        results["corpus"] = evaluate_corpus(corpus, work, "corpus")
        results["blind_sets"] = []
        for file, status, note in BLIND_SETS:
            rows = load_corpus(HERE / file)
            name = file.split(".")[0]
            block = evaluate_corpus(rows, work, name)
            block.update(file=file, status=status, note=note, learned=learned_effect(rows, work, name, label_seeds))
            results["blind_sets"].append(block)
        results["real_sets"] = []
        for file, status, note in REAL_SETS:
            if not (HERE / file).exists():  # a blind set not yet written
                continue
            rows = load_corpus(HERE / file)
            block = evaluate_corpus(rows, work, file.split(".")[0])
            block.update(file=file, status=status, note=note)
            results["real_sets"].append(block)
        results["adversarial_cpu"] = adversarial_cpu()
        results["mcp_stall"] = mcp_stall(work, MCP_STALL_REPEATS if not args.quick else 5)
        results["cue_cross_validation"] = cue_cross_validation(
            [(name, load_corpus(HERE / name)) for name in CUE_AUDIT_SETS])
        results["latency"] = latency(corpus, work, repeats)
    results["scenario"] = {
        "available": available,
        "passed": scenario_checks.passed,
        "total": len(scenario_checks.items),
        "checks": scenario_checks.items,
    }
    results["extra"] = {"passed": extra_checks.passed, "total": len(extra_checks.items), "checks": extra_checks.items}
    c = results["corpus"]
    newest = results["blind_sets"][-1]
    results["blind_goal"] = {"file": newest["file"], "status": newest["status"],
                             "accuracy": newest["accuracy"]["all"], "required": BLIND_GOAL,
                             "unknown_share": newest["unknown_share"], "met": newest["accuracy"]["all"] >= BLIND_GOAL,
                             "wrong_category_share": newest["wrong_category_share"],
                             "specific_rules_alone": newest["specific_rules_alone"],
                             "accuracy_after_labelling_10pct": newest["learned"]["accuracy_after_median"]}
    problems = [f"validation failed: {i['phase']}: {i['check']}" for i in scenario_checks.failures()]
    problems += [f"validation failed: extra: {i['check']}" for i in extra_checks.failures()]
    if c["accuracy"]["all"] < TARGETS["accuracy"]:
        problems.append(f"category accuracy {c['accuracy']['all']:.1%} < 90 %")
    if c["grouping"]["precision"] < TARGETS["precision"]:
        problems.append(f"grouping precision {c['grouping']['precision']:.3f} < 0.95")
    if c["grouping"]["recall"] < TARGETS["recall"]:
        problems.append(f"grouping recall {c['grouping']['recall']:.3f} < 0.90")
    cv = results["cue_cross_validation"]
    if not cv["shipped_matches_audit"]:
        problems.append(f"cues.RETIRED {cv['shipped_retired']} differs from the audit of the labelled sets "
                        f"{cv['retired_by_audit_of_every_set']}")
    if not results["blind_goal"]["met"]:
        problems.append(f"blind set {newest['file']}: category accuracy {newest['accuracy']['all']:.1%} < "
                        f"{BLIND_GOAL:.0%} with the LLM off ({newest['unknown_share']:.1%} unknown)")
    for real in results["real_sets"]:
        for key, value in (("precision", real["grouping"]["precision"]), ("recall", real["grouping"]["recall"]),
                           ("accuracy", real["accuracy"]["all"])):
            if value < REAL_GOALS[key]:
                problems.append(f"{real['file']}: {key} {value:.3f} < {REAL_GOALS[key]}")
        if real["wrong_category_share"] > REAL_GOALS["wrong"]:
            problems.append(f"{real['file']}: wrong category {real['wrong_category_share']:.1%} > 3 %")
    worst = max(v["cpu_s_max"] for v in results["adversarial_cpu"].values())
    if worst > ADVERSARIAL_BUDGET_S:
        problems.append(f"normalising + diagnosing a crafted message took {worst:.3f} s CPU > {ADVERSARIAL_BUDGET_S}")
    small = results["adversarial_cpu"][str(min(ADVERSARIAL_SIZES))]["cpu_s_max"]
    if small > ADVERSARIAL_SMALL_SHARE * ADVERSARIAL_BUDGET_S:
        problems.append(f"a crafted {min(ADVERSARIAL_SIZES):,}-character message took {small:.3f} s CPU > "
                        f"{ADVERSARIAL_SMALL_SHARE:.0%} of {ADVERSARIAL_BUDGET_S} s")
    stall = results["mcp_stall"]
    if not stall["met"]:
        problems.append(f"MCP: a concurrent call was delayed {stall['delay_ms_median']} ms (median) by a 9 KB "
                        f"failure_lookup costing the server {stall['server_cpu_ms_per_lookup']} ms CPU")
    results["targets"] = TARGETS
    results["problems"] = problems
    results["passed"] = not problems
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", "utf-8")
    write_markdown(args.out / f"{stem}.md", results)
    print(
        f"scenario validations {scenario_checks.passed}/{len(scenario_checks.items)}; "
        f"extra {extra_checks.passed}/{len(extra_checks.items)}"
    )
    print(f"corpus: accuracy {c['accuracy']} precision {c['grouping']['precision']} recall {c['grouping']['recall']}")
    for b in results["blind_sets"]:
        print(f"{b['file']} ({b['status']}): accuracy {b['accuracy']['all']} unknown {b['unknown_share']} precision "
              f"{b['grouping']['precision']} recall {b['grouping']['recall']}; after labelling 10 %: "
              f"{b['learned']['accuracy_before_median']:.3f} -> {b['learned']['accuracy_after_median']:.3f}")
    for fold in cv["folds"]:
        print(f"leave-one-set-out, held out {fold['held_out']}: specific rules {fold['specific_only']}, "
              f"with cues {fold['with_cues']}, cues alone {fold['cues_alone']}")
    for key, v in results["latency"].items():
        print(f"{key}: median {v['median']} µs (min {v['min']}, max {v['max']}, {v['repeats']} repeats)")
    for problem in problems:
        print(f"FAIL: {problem}")
    budgets = benchkit.Checks()  # a list, not a dict: two validations may share a name
    for i in scenario_checks.items:
        budgets.add(f"{i['phase']}: {i['check']}", i["passed"])
    for i in extra_checks.items:
        budgets.add(f"extra: {i['check']}", i["passed"])
    budgets.add("category accuracy >= 90 %", c["accuracy"]["all"] >= TARGETS["accuracy"])
    budgets.add("grouping precision >= 0.95", c["grouping"]["precision"] >= TARGETS["precision"])
    budgets.add("grouping recall >= 0.90", c["grouping"]["recall"] >= TARGETS["recall"])
    budgets.add("cues.RETIRED matches the cue audit", cv["shipped_matches_audit"])
    for real in results["real_sets"]:
        budgets.add(f"{real['file']}: grouping precision >= 0.95, recall >= 0.90, accuracy >= 95 %, wrong <= 3 %",
                    real["grouping"]["precision"] >= REAL_GOALS["precision"]
                    and real["grouping"]["recall"] >= REAL_GOALS["recall"]
                    and real["accuracy"]["all"] >= REAL_GOALS["accuracy"]
                    and real["wrong_category_share"] <= REAL_GOALS["wrong"])
    budgets.add(f"crafted 1 MB message normalised + diagnosed <= {ADVERSARIAL_BUDGET_S} s CPU",
                worst <= ADVERSARIAL_BUDGET_S)
    budgets.add(f"crafted 100 KB message normalised + diagnosed <= {ADVERSARIAL_SMALL_SHARE:.0%} of "
                f"{ADVERSARIAL_BUDGET_S} s CPU", small <= ADVERSARIAL_SMALL_SHARE * ADVERSARIAL_BUDGET_S)
    budgets.add("MCP: a 9 KB failure_lookup delays a concurrent call by no more than its CPU time", stall["met"])
    budgets.add(f"blind set {newest['file']}: category accuracy >= {BLIND_GOAL:.0%} with the LLM off",
                results["blind_goal"]["met"])
    return benchkit.finish(args, "demo_failure_intelligence_bench", budgets)


if __name__ == "__main__":
    sys.exit(main())
