"""What importing an Agent Skills tree costs, against reading and parsing it with PyYAML alone.

Generates a tree of skill folders (default 1,000; ``--quick`` 200) from a seeded random draw: each
``SKILL.md`` has name, description, license, compatibility and a small metadata map in its front
matter and a Markdown body of 1-4 KB; every third skill bundles a script and every fifth a reference
file. Then, ``--repeats`` times each, alternating so drift in the machine's load hits all equally:

* **floor**: read every file of the tree (SKILL.md and bundled files) and parse each front matter
  with ``yaml.safe_load`` (PyYAML's documented safe entry point; its C-accelerated loader is timed too
  and reported, not judged);
* **import**: ``import_skills`` of the whole tree into a fresh library file (validation, the
  one-transaction write of skills, front matter, bundled files and, when the fast embedding tier is
  installed, their vectors);
* **no-change sync**: ``import_skills(..., sync=True)`` of the same tree into the library it was
  imported into: nothing changed, so every folder is read and hashed and none is parsed.

Goals (issue 32): import CPU <= 2x the floor's CPU; no-change sync CPU <= 0.5x the import's. CPU time
(``time.process_time``) is judged because the machine is shared; wall time is reported beside it.
Writes results.json and results.md (``--quick``: results.quick.*) and exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from kaos_dream import Library, benchkit  # noqa: E402
from kaos_dream.agent_skills.importer import import_skills  # noqa: E402

HERE = Path(__file__).resolve().parent
WORDS = ("csv", "parquet", "deploy", "canary", "retry", "http", "s3", "kafka", "tls", "dns", "docker", "pytest",
         "terraform", "redis", "cache", "queue", "schema", "index", "backup", "restore", "lint", "release")


def generate(root: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(count):
        words = rng.sample(WORDS, 4)
        name = f"{words[0]}-{words[1]}-{i:05d}"
        folder = root / name
        folder.mkdir(parents=True)
        description = (f"{words[0].capitalize()} {words[1]} with {words[2]} and {words[3]}. Use when a task "
                       f"mentions {words[0]} or {words[2]} (variant {i}).")
        body_lines = [f"# {name}", ""] + [
            f"{n + 1}. Run `{rng.choice(WORDS)} --{rng.choice(WORDS)}` on {{target}} and check the "
            f"{rng.choice(WORDS)} output." for n in range(rng.randint(15, 60))]
        front = (f"---\nname: {name}\ndescription: {description}\nlicense: Apache-2.0\n"
                 f"compatibility: needs python3\nmetadata:\n  author: team-{i % 7}\n  version: \"{i % 5}.0\"\n---\n")
        (folder / "SKILL.md").write_text(front + "\n".join(body_lines) + "\n", encoding="utf-8")
        if i % 3 == 0:
            (folder / "scripts").mkdir()
            (folder / "scripts" / "run.py").write_text("import sys\n" + "print(sys.argv)\n" * 40)
        if i % 5 == 0:
            (folder / "references").mkdir()
            (folder / "references" / "REFERENCE.md").write_bytes(bytes(rng.getrandbits(8) for _ in range(4096)))


def floor(root: Path, loader: Any) -> int:
    """Read every file; parse each front matter with PyYAML. Returns the number of documents."""
    parsed = 0
    for folder in sorted(root.iterdir()):
        for dirpath, _, files in os.walk(folder):
            for f in files:
                data = Path(dirpath, f).read_bytes()
                if f == "SKILL.md" and dirpath == str(folder):
                    text = data.decode("utf-8")
                    end = text.index("\n---\n", 4)
                    yaml.load(text[4:end], Loader=loader)  # noqa: S506 - SafeLoader / CSafeLoader
                    parsed += 1
    return parsed


def timed(fn: Any) -> tuple[float, float, Any]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, out


def stats(samples: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(samples), 4), "min_s": round(min(samples), 4),
            "max_s": round(max(samples), 4), "n": len(samples)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=None, help="folders in the tree (default 1000; quick 200)")
    parser.add_argument("--repeats", type=int, default=None, help="runs of each measurement (default 5; quick 3)")
    benchkit.add_standard_args(parser, here=HERE, seed=32)
    args = parser.parse_args()
    count = args.skills or (200 if args.quick else 1000)
    repeats = args.repeats or (3 if args.quick else 5)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kaos-skill-bench-") as tmp:
        tree = Path(tmp) / "skills"
        generate(tree, count, args.seed)
        size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
        samples: dict[str, dict[str, list[float]]] = {k: {"cpu": [], "wall": []}
                                                      for k in ("floor", "floor_c", "import", "sync")}
        semantic = ""
        for r in range(repeats):
            for key, loader in (("floor", yaml.SafeLoader), ("floor_c", getattr(yaml, "CSafeLoader", yaml.SafeLoader))):
                cpu, wall, parsed = timed(lambda loader=loader: floor(tree, loader))
                assert parsed == count
                samples[key]["cpu"].append(cpu)
                samples[key]["wall"].append(wall)
            db = Path(tmp) / f"lib-{r}.db"
            with Library(db) as lib:
                lib.vectors.embedder()  # the model loads once per process, as in `kaos`: not part of an import
                semantic = lib.vectors.off_reason() or "on (fast tier)"
                cpu, wall, result = timed(lambda lib=lib: import_skills(lib, [tree], sync=True))
                assert result.counts()["added"] == count, result.counts()
                samples["import"]["cpu"].append(cpu)
                samples["import"]["wall"].append(wall)
                cpu, wall, again = timed(lambda lib=lib: import_skills(lib, [tree], sync=True))
                assert again.changed == 0
                samples["sync"]["cpu"].append(cpu)
                samples["sync"]["wall"].append(wall)
            db.unlink()
    med = {k: statistics.median(v["cpu"]) for k, v in samples.items()}
    import_ratio = med["import"] / med["floor"]
    sync_ratio = med["sync"] / med["import"]
    load = os.getloadavg()
    results = {
        "skills": count, "tree_bytes": size, "repeats": repeats, "seed": args.seed,
        "semantic_embedding": semantic, "load_average_1_5_15": [round(x, 2) for x in load],
        "cpu": {k: stats(v["cpu"]) for k, v in samples.items()},
        "wall": {k: stats(v["wall"]) for k, v in samples.items()},
        "import_over_floor_cpu": round(import_ratio, 3),
        "import_over_c_floor_cpu": round(med["import"] / med["floor_c"], 3),
        "sync_over_import_cpu": round(sync_ratio, 3),
        "goals": {"import <= 2x floor (CPU)": import_ratio <= 2.0, "no-change sync <= 0.5x import (CPU)":
                  sync_ratio <= 0.5},
        "seconds": round(time.perf_counter() - started, 1),
    }
    stem = benchkit.results_stem(args)
    stem.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    rows = "\n".join(
        f"| {label} | {results['cpu'][k]['median_s']:.3f} ({results['cpu'][k]['min_s']:.3f}-"
        f"{results['cpu'][k]['max_s']:.3f}) | {results['wall'][k]['median_s']:.3f} ({results['wall'][k]['min_s']:.3f}-"
        f"{results['wall'][k]['max_s']:.3f}) |"
        for k, label in (("floor", "floor: read + yaml.safe_load"), ("floor_c", "floor, C loader (reported only)"),
                         ("import", "import_skills (fresh library)"), ("sync", "no-change sync")))
    goals = "\n".join(f"* {name}: {'met' if met else 'MISSED'}" for name, met in results["goals"].items())
    stem.with_suffix(".md").write_text(
        f"# Agent Skills import\n\n{count} generated skill folders ({size} bytes), {repeats} runs each, seed "
        f"{args.seed}; semantic embedding: {semantic}; load average {results['load_average_1_5_15']}.\n\n"
        "| what | CPU s, median (min-max) | wall s, median (min-max) |\n|---|---|---|\n"
        f"{rows}\n\nImport / floor (CPU): **{import_ratio:.3f}x** (goal <= 2x); against the C loader "
        f"{results['import_over_c_floor_cpu']:.3f}x. No-change sync / import (CPU): **{sync_ratio:.3f}x** "
        f"(goal <= 0.5x).\n\n{goals}\n")
    print(stem.with_suffix(".md").read_text())
    checks = benchkit.Checks.from_mapping(results["goals"])
    return benchkit.finish(args, "demo_skill_import_bench", checks, results["seconds"])


if __name__ == "__main__":
    sys.exit(main())
