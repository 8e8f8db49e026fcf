"""The simulated workload: topics of related skills and memories, and a stream of episodes, some corrupted.

A library has ``DOMAINS`` domains of ``TOPICS_PER_DOMAIN`` topics; each topic has ``SKILLS_PER_TOPIC``
skills and ``MEMORIES_PER_TOPIC`` memories. Words are generated pseudo-words (seeded): every text
mixes two words of its domain (shared with the sibling topics, so searches also return near misses),
three of its topic, two of its own and two generic ones. Ground truth: two items are related when
they belong to the same topic.

An episode works on one topic: it searches memories (top 2, hits recorded) and skills (top 5, hits
recorded), applies 2 or 3 of the topic's skills (successful outcomes) and completes, citing what it
used. A corrupted episode also applies one *unrelated* skill — the best-ranked off-topic skill its
own search returned (a near miss from a sibling topic; a random off-topic skill when the search
returned none) — and then, by kind:

* ``hallucinated`` — completes, citing what it used plus 1-3 items that do not exist;
* ``failed`` — the unrelated skill fails and the episode ends ``failed``;
* ``silent`` — completes and cites only real items it used. **No heuristic validator can see this
  one** (outcome and grounding both pass); only an LLM judging the conclusion might.

The plan (topics, queries, samples, corruption kinds, invented names) is drawn up front from the seed,
so the gate-on and gate-off runs replay the same stream; the one choice made during the run, the
off-topic skill, comes from the search, which does not read the graph (the two runs' streams are
compared and must be identical).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

DOMAINS = 4
TOPICS_PER_DOMAIN = 3
SKILLS_PER_TOPIC = 4
MEMORIES_PER_TOPIC = 3
QUERIES_PER_TOPIC = 3
KINDS = ("hallucinated", "failed", "silent")
GENERIC = ("check", "update", "run", "notes", "result", "step", "config", "report")
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


@dataclass(frozen=True)
class Item:
    kind: str  # skill | memory
    ref: str  # skill name or memory key
    topic: int
    text: str


@dataclass(frozen=True)
class Library:
    items: tuple[Item, ...]
    queries: dict[int, tuple[str, ...]]  # topic -> query variants

    @property
    def topics(self) -> int:
        return len(self.queries)

    def skills_of(self, topic: int) -> list[Item]:
        return [i for i in self.items if i.kind == "skill" and i.topic == topic]


@dataclass(frozen=True)
class PlannedEpisode:
    index: int
    topic: int
    query: str
    skills: tuple[str, ...]  # the on-topic skills it applies
    corruption: str | None  # None (honest) or one of KINDS
    invented: tuple[tuple[str, str], ...]  # citations of items that do not exist (hallucinated only)
    fallback_offtopic: str  # used when the search returned no off-topic skill


def _words(rng: random.Random, n: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        w = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(3))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def make_library(seed: int) -> Library:
    rng = random.Random(seed)
    topics = DOMAINS * TOPICS_PER_DOMAIN
    per_item = 2
    n_items = topics * (SKILLS_PER_TOPIC + MEMORIES_PER_TOPIC)
    pool = _words(rng, DOMAINS * 4 + topics * 5 + n_items * per_item)
    domain_words = [pool[d * 4:(d + 1) * 4] for d in range(DOMAINS)]
    base = DOMAINS * 4
    topic_words = [pool[base + t * 5: base + (t + 1) * 5] for t in range(topics)]
    own = iter(pool[base + topics * 5:])
    items: list[Item] = []
    queries: dict[int, tuple[str, ...]] = {}
    for t in range(topics):
        dom = domain_words[t // TOPICS_PER_DOMAIN]
        for kind, count in (("skill", SKILLS_PER_TOPIC), ("memory", MEMORIES_PER_TOPIC)):
            for i in range(count):
                mine = [next(own) for _ in range(per_item)]
                words = rng.sample(dom, 2) + rng.sample(topic_words[t], 3) + mine + rng.sample(GENERIC, 2)
                rng.shuffle(words)
                ref = f"t{t:02d}-{mine[0]}-{kind[0]}{i}"
                items.append(Item(kind, ref, t, " ".join(words)))
        queries[t] = tuple(" ".join([rng.choice(dom)] + rng.sample(topic_words[t], 2))
                           for _ in range(QUERIES_PER_TOPIC))
    return Library(tuple(items), queries)


def plan_episodes(lib: Library, seed: int, episodes: int, corruption: float) -> list[PlannedEpisode]:
    rng = random.Random(seed * 7919 + round(corruption * 1000))
    plan: list[PlannedEpisode] = []
    all_skills = [i for i in lib.items if i.kind == "skill"]
    for index in range(episodes):
        topic = rng.randrange(lib.topics)
        query = rng.choice(lib.queries[topic])
        mine = [s.ref for s in lib.skills_of(topic)]
        skills = tuple(sorted(rng.sample(mine, rng.choice((2, 3)))))
        corrupted = rng.random() < corruption
        kind = rng.choice(KINDS) if corrupted else None
        invented: tuple[tuple[str, str], ...] = ()
        if kind == "hallucinated":
            invented = tuple((rng.choice(("skill", "memory")), f"invented-{index}-{j}")
                             for j in range(rng.randint(1, 3)))
        fallback = rng.choice([s.ref for s in all_skills if s.topic != topic])
        plan.append(PlannedEpisode(index, topic, query, skills, kind, invented, fallback))
    return plan
