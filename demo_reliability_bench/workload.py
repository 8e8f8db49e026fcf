"""The stress workload: a seeded library of skills and memories, and the text agents send.

Written for this benchmark (no external data): 48 skills and 24 memories over a small operations
vocabulary, so searches return several hits and outcomes spread over many skills.
"""

from __future__ import annotations

import random

TOPICS = ["deploy", "backup", "etl", "report", "migrate", "index", "cache", "certificate", "queue", "logs",
          "metrics", "secrets"]
VERBS = ["run", "check", "repair", "rotate", "verify", "restore", "tune", "clean"]
TARGETS = ["postgres", "redis", "kafka", "nginx", "s3", "kubernetes", "terraform", "airflow"]
TOOLS = ["pytest", "kubectl", "terraform", "psql", "curl"]
ERRORS = [
    "ConnectionRefusedError: [Errno 111] connect to 10.0.{a}.{b}:5432 refused",
    "TimeoutError: request to https://api.internal/{a}/jobs timed out after {b}s",
    "PermissionError: [Errno 13] Permission denied: '/var/lib/app/{a}/state-{b}.json'",
    "KeyError: 'tenant_{a}' in config section {b}",
    "OOMKilled: container worker-{a} exceeded memory limit {b}Mi",
]


def skills(seed: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(48):
        topic, verb, target = TOPICS[i % len(TOPICS)], VERBS[i % len(VERBS)], TARGETS[(i * 5) % len(TARGETS)]
        extra = rng.sample(TOPICS, 2)
        out.append((f"{verb}-{topic}-{target}-{i}",
                    f"{verb} the {topic} of {target}; also touches {extra[0]} and {extra[1]}",
                    f"{verb} {{what}} on {target}"))
    return out


def memories(seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed + 1)
    return [(f"mem-{i}", f"{rng.choice(TARGETS)} {rng.choice(TOPICS)} note: {rng.choice(VERBS)} before "
             f"{rng.choice(VERBS)} ({i})") for i in range(24)]


def query(rng: random.Random) -> str:
    words = [rng.choice(TOPICS), rng.choice(TARGETS)]
    if rng.random() < 0.5:
        words.append(rng.choice(VERBS))
    return " ".join(words)


def failure(rng: random.Random) -> tuple[str, str]:
    return rng.choice(TOOLS), rng.choice(ERRORS).format(a=rng.randrange(40), b=rng.randrange(900))


def action(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)} {rng.choice(TOPICS)} on {rng.choice(TARGETS)}"
