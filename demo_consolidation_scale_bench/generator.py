"""The consolidation-scale library generator, reimplemented from the reference spec.

``../shared/bench-data/kaos/consolidation_scale_spec.json`` describes how the reference libraries
(100 / 1k / 10k skills) were drawn; this module follows that description so the same generator can
produce 100k skills. ``run.py`` checks that it reproduces the stored 100 / 1k / 10k libraries exactly
before trusting it at 100k.

Draw order per skill i (one ``random.Random(42)`` per scale): verb = choice(VOCAB), domain =
choice(DOMAINS), k = randint(3, 6), desc = sample(VOCAB, k) + [domain]. Then n_mem = max(5, n // 20)
memories (``note i`` / key ``hot-i``; even i get 5 retrievals). Then, for the skills in name order
(ties by id), 5 outcomes each with success = choice([0, 1]).
"""

from __future__ import annotations

import random
from typing import Any


def generate(n: int, vocab: list[str], domains: list[str], seed: int = 42) -> dict[str, Any]:
    rng = random.Random(seed)
    skills: list[dict[str, Any]] = []
    for i in range(n):
        verb = rng.choice(vocab)
        domain = rng.choice(domains)
        k = rng.randint(3, 6)
        desc = rng.sample(vocab, k=k) + [domain]
        skills.append({
            "skill_id": i + 1,
            "name": f"{verb}-{domain}-{i}",
            "description": " ".join(desc),
            "template": f"Run {verb} against {domain}",
            "tags": [verb, domain],
            "uses_success": [],
        })
    n_mem = max(5, n // 20)
    memories = [
        {"memory_id": i + 1, "key": f"hot-{i}", "content": f"note {i}", "type": "insight",
         "hits": 5 if i % 2 == 0 else 0}
        for i in range(n_mem)
    ]
    for skill in sorted(skills, key=lambda s: (s["name"], s["skill_id"])):
        skill["uses_success"] = [rng.choice([0, 1]) for _ in range(5)]
    return {"n_skills": n, "skills": skills, "memories": memories}
