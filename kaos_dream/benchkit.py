"""What every ``demo_*_bench/run.py`` shares, so a CI job can run any of them the same way.

* the same flags: ``--quick`` (a CI-sized run), ``--data DIR`` (reference bench data), ``--out DIR``
  (where results go, so a CI run need not overwrite the committed results), ``--seed N`` where the
  benchmark draws random numbers (a benchmark that sweeps several seeds takes N as the first of them:
  :func:`seed_sweep`), and ``--junit FILE``;
* a JUnit XML summary with one test case per budget or goal, so a CI system shows which one failed.

A run.py keeps its own measurement and its own checks; it calls :func:`add_standard_args` after its
own ``add_argument`` lines (a flag it already defines is left alone), collects its checks in a
:class:`Checks`, and ends with :func:`finish`.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path


def add_standard_args(parser: argparse.ArgumentParser, *, here: Path, data: Path | None = None,
                      seed: int | None = None) -> None:
    """Add the flags every benchmark takes, except those the script already defines.

    ``here`` is the benchmark's folder (the default ``--out``); ``data`` the default ``--data`` (only
    for benchmarks that read reference data); ``seed`` the default ``--seed`` (only for benchmarks that
    draw random numbers). Pass None for what a benchmark does not use.
    """
    have = set(parser._option_string_actions)  # argparse keeps no public list of defined flags
    if "--quick" not in have:
        parser.add_argument("--quick", action="store_true", help="a CI-sized run; writes results.quick.*")
    if data is not None and "--data" not in have:
        parser.add_argument("--data", type=Path, default=data, help=f"folder with the reference bench data "
                            f"(default {data})")
    if "--out" not in have:
        parser.add_argument("--out", type=Path, default=here, help="folder for results.json / results.md")
    if seed is not None and "--seed" not in have:
        parser.add_argument("--seed", type=int, default=seed,
                            help=f"seed of the random choices; a sweep over k seeds uses N, N+1, …, N+k-1 "
                                 f"(default {seed}, the committed results)")
    if "--junit" not in have:
        parser.add_argument("--junit", type=Path, default=None,
                            help="also write a JUnit XML summary, one test case per budget")


def seed_sweep(args: argparse.Namespace, count: int) -> list[int]:
    """The ``count`` seeds a sweep runs: ``--seed`` and the ones after it, so the default reproduces the
    committed results and any other ``--seed`` moves the whole sweep deterministically."""
    if count < 1:
        raise ValueError(f"a seed sweep needs at least one seed, not {count}")
    return list(range(args.seed, args.seed + count))


def results_stem(args: argparse.Namespace) -> Path:
    """``OUT/results`` or, for ``--quick``, ``OUT/results.quick``: a quick run never replaces the
    committed full results. The folder is created."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    return out / ("results.quick" if getattr(args, "quick", False) else "results")


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class Checks:
    """The budgets and goals of one run, in the order they were checked."""

    items: list[Check] = field(default_factory=list)

    def add(self, name: str, passed: bool, detail: str = "") -> bool:
        self.items.append(Check(name, bool(passed), detail))
        return bool(passed)

    @classmethod
    def from_mapping(cls, named: Mapping[str, object]) -> Checks:
        """From a benchmark's own ``{budget name: met}`` dict."""
        return cls([Check(name, bool(met)) for name, met in named.items()])

    def __iter__(self) -> Iterator[Check]:
        return iter(self.items)

    @property
    def missed(self) -> list[Check]:
        return [c for c in self.items if not c.passed]


def junit_xml(suite: str, checks: Checks, seconds: float = 0.0) -> bytes:
    """One ``<testsuite>`` with a ``<testcase>`` per check; a missed one carries a ``<failure>``."""
    root = ET.Element("testsuite", name=suite, tests=str(len(checks.items)), failures=str(len(checks.missed)),
                      errors="0", skipped="0", time=f"{seconds:.3f}")
    for check in checks:
        case = ET.SubElement(root, "testcase", classname=suite, name=check.name, time="0")
        if not check.passed:
            failure = ET.SubElement(case, "failure", message=check.detail or "budget missed")
            failure.text = check.detail or "budget missed"
        elif check.detail:
            ET.SubElement(case, "system-out").text = check.detail
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def finish(args: argparse.Namespace, suite: str, checks: Checks, seconds: float = 0.0) -> int:
    """Write the JUnit file if asked, report missed budgets on stderr, return the exit status."""
    junit: Path | None = getattr(args, "junit", None)
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        tmp = junit.with_name(junit.name + ".tmp")
        tmp.write_bytes(junit_xml(suite, checks, seconds))
        tmp.replace(junit)  # never a half-written file for the CI system to read
    if checks.missed:
        sys.stderr.write(f"{suite}: missed: " + "; ".join(f"{c.name} ({c.detail})" if c.detail else c.name
                                                          for c in checks.missed) + "\n")
        return 1
    return 0
