"""A large generated skill library for the scale bench: varied texts, real fast-tier vectors.

Words are the whole-word pieces of the fast model's own tokenizer vocabulary (lower-case letters,
4+ characters, ~10k words), so descriptions are varied and their WordLlama vectors spread the way real
skill texts do (a 40-word vocabulary, as in demo_consolidation_scale_bench, makes near-duplicates and
an ANN index meaningless). Everything is drawn from ``random.Random(seed)``; the same (n, seed) gives
the same library. Vectors are cached as .npy under the cache folder: embedding 1M texts takes minutes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np

DOMAINS = ["csv", "parquet", "postgres", "kafka", "s3", "redis", "http", "grpc", "json", "yaml", "docker",
           "kubernetes", "terraform", "spark", "pandas", "sqlite", "git", "pdf", "email", "slack"]


def vocabulary() -> list[str]:
    """Whole words of the fast tier's tokenizer, sorted (deterministic for a given wordllama wheel)."""
    import wordllama

    path = Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
    vocab = json.loads(path.read_text())["model"]["vocab"]
    words = {t[1:] for t in vocab if t.startswith("\u2581") and t[1:].isascii() and t[1:].isalpha()
             and t[1:].islower() and len(t) >= 5}
    return sorted(words)


TOPIC_SIZE = 50  # skills per topic, on average
TOPIC_WORDS = 12  # words of a topic's own pool


def skills(n: int, seed: int = 7, *, topics: bool = True) -> Iterator[dict[str, object]]:
    """``n`` skills (name, description, tags), ids 1..n in order. With ``topics`` (the default) a
    library is clustered as real ones are (a team's skills share a tool's or a domain's words): each
    skill belongs to one of n / 50 topics and takes 4-7 words of its topic's 12 and 1-3 of the whole
    vocabulary. Without, each description is 5-10 words of the whole vocabulary: no structure at all,
    the hardest case for an ANN graph (every neighbour is about as far as the next)."""
    rng = random.Random(seed)
    words = vocabulary()
    pools = [rng.sample(words, TOPIC_WORDS) for _ in range(max(1, n // TOPIC_SIZE))] if topics else []
    for i in range(n):
        verb = rng.choice(words)
        domain = rng.choice(DOMAINS)
        if topics:
            pool = pools[rng.randrange(len(pools))]
            picked = rng.sample(pool, rng.randint(4, 7)) + rng.sample(words, rng.randint(1, 3))
            rng.shuffle(picked)
            desc = " ".join(picked)
        else:
            desc = " ".join(rng.sample(words, rng.randint(5, 10)))
        yield {"name": f"{verb}-{domain}-{i}", "description": f"{desc} {domain}", "tags": [verb, domain]}


def unseen_words() -> list[str]:
    """Whole words of the same tokenizer that no skill's text holds: capitalised pieces (4+ letters)
    whose lower-case form is not in :func:`vocabulary`, lower-cased."""
    import wordllama

    path = Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
    vocab = json.loads(path.read_text())["model"]["vocab"]
    held = set(vocabulary()) | set(DOMAINS)
    return sorted({t[1:].lower() for t in vocab if t.startswith("\u2581") and t[1:].isascii() and t[1:].isalpha()
                   and t[1].isupper() and len(t) >= 5 and t[1:].lower() not in held})


def semantic_queries(count: int, seed: int = 17) -> list[str]:
    """Queries of 2-4 words that no skill holds (:func:`unseen_words`): no lexical match at all, so every
    search takes the semantic path (the case of a paraphrase sharing no word with its skill)."""
    rng = random.Random(seed)
    words = unseen_words()
    return [" ".join(rng.sample(words, rng.randint(2, 4))) for _ in range(count)]


def queries(count: int, seed: int = 11) -> list[str]:
    """Queries of 2-4 vocabulary words (most take the semantic path: no skill holds them all)."""
    rng = random.Random(seed)
    words = vocabulary()
    return [" ".join(rng.sample(words, rng.randint(2, 4))) for _ in range(count)]


def anchored_queries(n: int, count: int, seed: int = 13, library_seed: int = 7, *, topics: bool = True) -> list[str]:
    """Queries looking for a skill that exists: three words of a random skill's description (of the
    first ``n``) and one word it does not hold, shuffled: a close neighbour exists, as when an agent
    half-remembers a skill."""
    rng = random.Random(seed)
    words = vocabulary()
    wanted = sorted(rng.sample(range(n), count))
    out: dict[int, str] = {}
    for i, s in enumerate(skills(n, library_seed, topics=topics)):
        if wanted and i == wanted[0]:
            held = str(s["description"]).split()[:-1]
            picked = rng.sample(held, 3) + [rng.choice(words)]
            rng.shuffle(picked)
            out[i] = " ".join(picked)
            wanted.pop(0)
            if not wanted:
                break
    return [out[i] for i in sorted(out)]


def vectors(n: int, cache: Path, seed: int = 7, *, topics: bool = True) -> np.ndarray:
    """The fast tier's vectors of :func:`skills` (n x 256 float32, unit rows), cached in ``cache``."""
    from kaos_dream.embedding.loader import load_embedder
    from kaos_dream.embedding.store import skill_text

    model = load_embedder("wordllama")
    path = cache / f"vectors-{model.model_id}-{model.model_version}-{n}-{seed}{'-topics' if topics else ''}.npy"
    if path.exists():
        return np.load(path, mmap_mode="r")
    cache.mkdir(parents=True, exist_ok=True)
    out = np.lib.format.open_memmap(path.with_suffix(".part.npy"), mode="w+", dtype=np.float32, shape=(n, model.dim))
    batch: list[str] = []
    start = 0
    for s in skills(n, seed, topics=topics):
        batch.append(skill_text(s["name"], s["description"], s["tags"]))  # type: ignore[arg-type]
        if len(batch) == 8192:
            out[start:start + len(batch)] = model.embed(batch)
            start += len(batch)
            batch = []
    if batch:
        out[start:start + len(batch)] = model.embed(batch)
    out.flush()
    del out
    path.with_suffix(".part.npy").rename(path)
    return np.load(path, mmap_mode="r")
