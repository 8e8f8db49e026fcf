"""Run a command and report the CPU time (user+sys) it and every process it waited for used.

Wall time on a shared machine says how busy the machine was; CPU time says what the suite costs.
Usage: python .ci/cpu_time.py LABEL BUDGET_MINUTES -- COMMAND...  (prints one line on stderr and exits
with the command's status; 0 for BUDGET_MINUTES means report only).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: cpu_time.py LABEL BUDGET_MINUTES -- COMMAND...", file=sys.stderr)
        return 2
    label, budget_min, command = argv[0], float(argv[1]), argv[3:]
    wall = time.monotonic()
    status = subprocess.call(command)
    wall = time.monotonic() - wall
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_min = (usage.ru_utime + usage.ru_stime) / 60
    load = ", ".join(f"{x:.1f}" for x in __import__("os").getloadavg())
    verdict = ""
    if budget_min > 0:
        verdict = f" (budget {budget_min:g} CPU-min: {'within' if cpu_min <= budget_min else 'OVER'})"
    print(f"CI: {label}: {cpu_min:.1f} CPU-minutes (user {usage.ru_utime / 60:.1f} + sys {usage.ru_stime / 60:.1f}),"
          f" {wall / 60:.1f} min wall, load average now {load}{verdict}", file=sys.stderr)
    if status == 0 and budget_min > 0 and cpu_min > budget_min:
        return 3
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
