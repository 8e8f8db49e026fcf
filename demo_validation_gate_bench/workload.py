"""The simulated workload: topics of related skills and memories, and a stream of episodes, some corrupted.

A library has ``DOMAINS`` domains of ``TOPICS_PER_DOMAIN`` topics; each topic has ``SKILLS_PER_TOPIC``
skills and ``MEMORIES_PER_TOPIC`` memories. Words are generated pseudo-words (seeded): every text
mixes two words of its domain (shared with the sibling topics, so searches also return near misses),
three of its topic, two of its own and two generic ones. Ground truth: two items are related when
they belong to the same topic.

An episode works on one topic: it searches memories (top 2, hits recorded) and skills (top 5, hits
recorded), applies 2 or 3 of the topic's skills (successful outcomes) and completes, citing what it
used. A corrupted episode also applies ``unrelated`` *unrelated* skills (1 by default) — the
best-ranked off-topic skills its own search returned (near misses from sibling topics; seeded random
off-topic skills when the search returned too few) — and then, by kind:

* ``hallucinated`` — completes, citing what it used plus 1-3 items that do not exist;
* ``failed`` — the (first) unrelated skill fails and the episode ends ``failed``;
* ``silent`` — completes and cites only real items it used. **No heuristic validator can see this
  one** (outcome and grounding both pass); only an LLM judging the conclusion might.

The plan (topics, queries, samples, corruption kinds, invented names, how many unrelated skills) is
drawn up front from the seed, so the gate-on and gate-off runs replay the same stream; the one choice
made during the run, which off-topic skills, comes from the search, which does not read the graph
(the runs' streams are compared and must be identical).

The ``unrelated`` and ``kinds`` options (a sensitivity study, ``sweep.py``) draw from a second rng,
never from the main one: with the defaults the plan is exactly the original one, and with other
values the same episodes (topic, query, skills) are corrupted, only how differs.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

DOMAINS = 4
TOPICS_PER_DOMAIN = 3
SKILLS_PER_TOPIC = 4
MEMORIES_PER_TOPIC = 3
QUERIES_PER_TOPIC = 3
KINDS = ("hallucinated", "failed", "silent")
UNRELATED_MIX = (1, 2, 3)
GENERIC = ("check", "update", "run", "notes", "result", "step", "config", "report")
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
ENGLISH = Path(__file__).with_name("english_library.json")


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
    unrelated: int = 0  # how many unrelated skills it co-uses when corrupted (0 when honest)
    fallback_more: tuple[str, ...] = ()  # further distinct off-topic skills, for unrelated > 1

    @property
    def fallbacks(self) -> tuple[str, ...]:
        """Off-topic skills to fall back on, in order (distinct; as many as ``unrelated``)."""
        return (self.fallback_offtopic, *self.fallback_more)


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


def english_library(path: Path = ENGLISH) -> Library:
    """The hand-written English library (``english_library.json``: 4 domains of 3 topics, each topic 4
    skills, 3 memories and 3 task phrasings): texts a real model can judge, for ``live_judge.py``.
    The text is fixed; a seed varies only the episode plan. Topics are numbered in file order."""
    data = json.loads(path.read_text())
    items: list[Item] = []
    queries: dict[int, tuple[str, ...]] = {}
    for domain in data["domains"]:
        for topic in domain["topics"]:
            t = len(queries)
            items += [Item("skill", s["name"], t, s["description"]) for s in topic["skills"]]
            items += [Item("memory", m["key"], t, m["content"]) for m in topic["memories"]]
            queries[t] = tuple(topic["queries"])
    return Library(tuple(items), queries)


def library_for(name: str, seed: int) -> Library:
    """``synthetic`` (generated from the seed, the benchmark's default) or ``english``."""
    if name == "synthetic":
        return make_library(seed)
    if name == "english":
        return english_library()
    raise ValueError(f"library must be 'synthetic' or 'english', not {name!r}")


def plan_episodes(lib: Library, seed: int, episodes: int, corruption: float, *,
                  unrelated: int | str = 1, kinds: tuple[str, ...] = KINDS) -> list[PlannedEpisode]:
    """The episode stream. ``unrelated``: unrelated skills per corrupted episode, a count >= 1 or
    ``"mix"`` (uniform over ``UNRELATED_MIX`` per corrupted episode). ``kinds``: the corruption kinds
    allowed (a non-empty subset of ``KINDS``); a drawn kind outside it is redrawn uniformly from it,
    so the kinds stay equally likely and the corrupted episodes stay the same."""
    if unrelated != "mix" and not (isinstance(unrelated, int) and unrelated >= 1):
        raise ValueError(f"unrelated must be a count >= 1 or 'mix', not {unrelated!r}")
    if not kinds or any(k not in KINDS for k in kinds):
        raise ValueError(f"kinds must be a non-empty subset of {KINDS}, not {kinds!r}")
    rng = random.Random(seed * 7919 + round(corruption * 1000))
    aux = random.Random(f"unrelated-kinds/{seed}/{round(corruption * 1000)}")  # the options' draws only
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
        if kind is not None and kind not in kinds:
            kind = aux.choice(kinds)
            if kind == "hallucinated":
                invented = tuple((aux.choice(("skill", "memory")), f"invented-{index}-{j}")
                                 for j in range(aux.randint(1, 3)))
        offtopic = [s.ref for s in all_skills if s.topic != topic]
        fallback = rng.choice(offtopic)
        count = 0
        more: tuple[str, ...] = ()
        if kind is not None:
            count = aux.choice(UNRELATED_MIX) if unrelated == "mix" else int(unrelated)
            if count > 1:
                more = tuple(aux.sample([s for s in offtopic if s != fallback], count - 1))
        plan.append(PlannedEpisode(index, topic, query, skills, kind, invented, fallback, count, more))
    return plan
