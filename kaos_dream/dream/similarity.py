"""Near-duplicate skills: exact token-Jaccard similarity join, without comparing every pair.

Tokenisation (the reference for merge proposals): the casefolded ``name + " " + description``,
split into maximal runs of letters and digits (``[^\\W_]+``), as a set. So ``sync-postgres-0`` gives
``{sync, postgres, 0}``. On the benchmark libraries this finds 0 pairs at 1k skills and exactly 9 pairs
at 10k skills with Jaccard >= 0.65.

Algorithm — a generalised prefix filter (after Wang, Li & Feng, SIGMOD 2012: an ℓ-prefix scheme):
tokens are ranked rarest first; tokens that occur in only one set can never be shared and are
dropped from the lists (they still count in the set's size). If ``J(x, y) >= t`` then
``|x ∩ y| >= ceil(t·|x|)``, and the first ``ℓ`` shared tokens lie within the first
``|x| - ceil(t·|x|) + ℓ`` tokens of each list. So every qualifying pair shares at least one ℓ-subset of
those prefixes: each set emits its prefix ℓ-subsets as hashed keys, equal keys give candidates, and
each candidate is verified exactly. ℓ = 1 is classic prefix filtering (best for rich vocabularies);
larger ℓ keeps candidate lists short when a few tokens are everywhere (the synthetic benchmark). ℓ is
chosen per call by counting candidates, which is cheap. Sets too small to share ℓ tokens use a
smaller ℓ, and their possible (smaller) partners emit that smaller ℓ as well, so no pair is missed.
Hash collisions only add candidates; verification is exact, so the answer equals the all-pairs scan.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np

_TOKEN = re.compile(r"[^\W_]+")
_EPS = 1e-9
SHORT_SET = 16  # sets up to this many tokens are matched per size pair
SUBSET_CAP = 64
_MIX = np.uint64(0x9E3779B97F4A7C15)


def tokenize(name: str, description: str) -> frozenset[str]:
    """The merge-detection token set of a skill (see the module docstring)."""
    return frozenset(_TOKEN.findall(f"{name} {description}".casefold()))


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def min_overlap(size: int, threshold: float) -> int:
    """Smallest intersection any partner of a set of ``size`` tokens can have: ceil(t·size)."""
    return max(1, math.ceil(threshold * size - _EPS))


def brute_force_pairs(sets: Sequence[frozenset[str]], threshold: float) -> list[tuple[int, int, float]]:
    """The exact all-pairs scan (quadratic): the reference the fast join is tested against."""
    out = []
    for i in range(len(sets)):
        a = sets[i]
        if not a:
            continue
        for j in range(i + 1, len(sets)):
            b = sets[j]
            if b:
                sim = jaccard(a, b)
                if sim >= threshold - _EPS:
                    out.append((i, j, sim))
    return out


def _distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort and a mask: faster than np.unique's hashing for int64)."""
    values = np.sort(values)
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


class _Prepared:
    """Sets as rank lists (rarest first, singletons dropped), padded into a matrix, plus full sizes.

    Built with numpy from one flat token list, so the per-set Python work is a single tokenisation.
    """

    def __init__(self, token_lists: Iterable[Iterable[str]]) -> None:
        flat: list[str] = []
        counts: list[int] = []
        for tokens in token_lists:
            before = len(flat)
            flat.extend(tokens)
            counts.append(len(flat) - before)
        n = len(counts)
        vocab = {t: i for i, t in enumerate(dict.fromkeys(flat))}
        tok = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
        width_v = max(1, len(vocab))
        owner = np.repeat(np.arange(n, dtype=np.int64), np.asarray(counts, dtype=np.int64))
        pairs = _distinct(owner * width_v + tok)  # distinct (set, token)
        owner, tok = pairs // width_v, pairs % width_v
        self.sizes = np.bincount(owner, minlength=n).astype(np.int64)
        df = np.bincount(tok, minlength=width_v)
        names = np.array(list(vocab), dtype=str) if vocab else np.array([], dtype=str)
        order = np.lexsort((names, df[: len(vocab)]))  # rarest first, ties by token text
        rank = np.empty(width_v, dtype=np.int64)
        rank[order] = np.arange(len(order))
        keep = df[tok] > 1  # a token in one set only can never be shared
        owner, ranks = owner[keep], rank[tok[keep]]
        code = np.sort(owner * width_v + ranks)
        owner, ranks = code // width_v, code % width_v
        self.lengths = np.bincount(owner, minlength=n).astype(np.int64)
        width = int(self.lengths.max()) if n else 0
        self.ranks = np.zeros((n, max(width, 1)), dtype=np.uint64)
        cols = np.arange(len(owner)) - np.repeat(np.cumsum(self.lengths) - self.lengths, self.lengths)
        self.ranks[owner, cols] = ranks.astype(np.uint64)


def pair_overlap(a: int, b: int, threshold: float) -> int:
    """Smallest |x ∩ y| for which sets of sizes a and b reach the threshold: ceil(t(a+b)/(1+t))."""
    return max(1, math.ceil(threshold * (a + b) / (1.0 + threshold) - _EPS))


def pair_ell(a: int, b: int, overlap: int, cap: int) -> int:
    """Subset size ℓ for the size pair (a, b): the largest ℓ <= overlap whose prefix ℓ-subsets number at
    most ``cap`` on both sides (ℓ = overlap means "all shared tokens must match"). Symmetric in a, b."""
    best = 1
    for ell in range(1, overlap + 1):
        if math.comb(a - overlap + ell, ell) <= cap and math.comb(b - overlap + ell, ell) <= cap:
            best = ell
    return best


def _mix(key: np.ndarray, values: np.ndarray) -> np.ndarray:
    key = (key ^ (values + np.uint64(1))) * _MIX
    return key ^ (key >> np.uint64(29))


def _signatures(prep: _Prepared, threshold: float, cap: int = SUBSET_CAP) -> tuple[np.ndarray, np.ndarray]:
    """(hashed key, set index) for every signature of every set.

    Short sets (<= SHORT_SET tokens) are matched per size pair (a, b): the required overlap o(a, b) is
    tight there, so signatures are the ℓ-subsets of the (a - o + ℓ)-prefix tagged with (a, b, ℓ).
    Longer sets, and the short sets that could partner one, also emit classic prefix tokens (ℓ = 1,
    o = ceil(t·a)), so every pair is covered by one scheme both of its sets emit.
    """
    groups: dict[tuple[int, int, int, int], list[np.ndarray]] = {}  # (tag a, tag b, plen, ell) -> sets
    present = set(np.flatnonzero(np.bincount(prep.sizes)).tolist()) if len(prep.sizes) else set()
    for size in sorted(present):
        if size == 0:
            continue
        members = np.flatnonzero(prep.sizes == size)
        lengths = prep.lengths[members]
        tags: list[tuple[int, int, int, int]] = []  # (tag a, tag b, prefix bound, ell)
        if size <= SHORT_SET:
            hi = min(SHORT_SET, math.floor(size / threshold + _EPS))
            for other in range(min_overlap(size, threshold), hi + 1):
                if other not in present:  # no set of that size: no partner to meet
                    continue
                o = pair_overlap(size, other, threshold)
                if o > min(size, other):
                    continue
                ell = pair_ell(size, other, o, cap)
                tags.append((min(size, other), max(size, other), size - o + ell, ell))
        if size > threshold * SHORT_SET:
            tags.append((0, 0, size - min_overlap(size, threshold) + 1, 1))
        for tag_a, tag_b, bound, ell in tags:
            plens = np.minimum(lengths, bound)
            for plen in np.flatnonzero(np.bincount(plens)).tolist():
                if plen >= ell:
                    groups.setdefault((tag_a, tag_b, plen, ell), []).append(members[plens == plen])
    keys: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    for (tag_a, tag_b, plen, ell), parts in sorted(groups.items()):
        idx = np.concatenate(parts)
        mat = prep.ranks[idx, :plen]
        seed = np.uint64((tag_a * 1_000_003 + tag_b) * 64 + ell)
        for combo in combinations(range(plen), ell):
            key = np.full(len(idx), seed, dtype=np.uint64)
            for col in combo:
                key = _mix(key, mat[:, col])
            keys.append(key)
            owners.append(idx)
    if not keys:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    return np.concatenate(keys), np.concatenate(owners)


def _candidate_pairs(keys: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """Distinct (i, j), i < j, of sets sharing a key, as an (m, 2) array."""
    if len(keys) < 2:
        return np.empty((0, 2), dtype=np.int64)
    order = np.argsort(keys)  # order within equal keys does not matter: every pair is taken
    keys = keys[order]
    owners = owners[order].astype(np.int64)
    del order
    shared = np.flatnonzero(keys[1:] == keys[:-1])  # element i and i + 1 share a key
    if len(shared) == 0:
        return np.empty((0, 2), dtype=np.int64)
    # Keep only elements of runs longer than one, then enumerate pairs inside each run.
    member = np.zeros(len(keys), dtype=bool)
    member[shared] = True
    member[shared + 1] = True
    keys, owners = keys[member], owners[member]
    del member, shared
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    lengths = np.diff(np.r_[starts, len(keys)])
    del keys
    after = np.repeat(starts + lengths, lengths) - np.arange(len(owners)) - 1  # later elements in the run
    total = int(after.sum())
    left = np.repeat(np.arange(len(owners)), after)
    first = np.repeat(np.cumsum(after) - after, after)
    right = left + 1 + (np.arange(total) - first)
    del first, after
    a, b = owners[left], owners[right]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    base = np.int64(int(owners.max()) + 1)
    code = _distinct(lo[keep] * base + hi[keep])
    return np.stack([code // base, code % base], axis=1)


def similar_pairs(
    sets: Sequence[frozenset[str]], threshold: float, cap: int = 64
) -> list[tuple[int, int, float]]:
    """All (i, j, jaccard) with i < j and ``J(sets[i], sets[j]) >= threshold``, sorted by (i, j).

    Exactly the pairs :func:`brute_force_pairs` returns. ``cap`` bounds the signatures per size pair
    (1 forces classic prefix filtering; tests use it to exercise every path).
    """
    return _join(sets, len(sets), threshold, cap)


def _join(token_lists: Iterable[Iterable[str]], n: int, threshold: float, cap: int) -> list[tuple[int, int, float]]:
    if not 0.0 < threshold <= 1.0:
        raise ValueError("threshold must be in (0, 1]")
    if n < 2:
        return []
    prep = _Prepared(token_lists)
    keys, owners = _signatures(prep, threshold, cap)
    cand = _candidate_pairs(keys, owners)
    if len(cand) == 0:
        return []
    sizes = prep.sizes
    sa, sb = sizes[cand[:, 0]], sizes[cand[:, 1]]
    small, large = np.minimum(sa, sb), np.maximum(sa, sb)
    cand = cand[small >= threshold * large - _EPS]  # length filter
    inter = _intersections(prep, cand)
    union = sizes[cand[:, 0]] + sizes[cand[:, 1]] - inter
    sim = inter / np.maximum(union, 1)
    hit = sim >= threshold - _EPS
    return [(int(i), int(j), float(x)) for (i, j), x in zip(cand[hit].tolist(), sim[hit].tolist(), strict=True)]


def _intersections(prep: _Prepared, cand: np.ndarray, chunk: int = 100_000) -> np.ndarray:
    """|x ∩ y| for candidate pairs, from the rank matrix (singleton tokens are never shared)."""
    width = prep.ranks.shape[1]
    out = np.zeros(len(cand), dtype=np.int64)
    if width > 24:  # long texts: a w×w comparison per pair would cost more than Python sets
        for n, (i, j) in enumerate(cand.tolist()):
            a = prep.ranks[i, : prep.lengths[i]].tolist()
            out[n] = len(set(a).intersection(prep.ranks[j, : prep.lengths[j]].tolist()))
        return out
    cols = np.arange(width)
    for lo in range(0, len(cand), chunk):
        i, j = cand[lo : lo + chunk, 0], cand[lo : lo + chunk, 1]
        eq = prep.ranks[i][:, :, None] == prep.ranks[j][:, None, :]
        eq &= (cols[None, :] < prep.lengths[i][:, None])[:, :, None]
        eq &= (cols[None, :] < prep.lengths[j][:, None])[:, None, :]
        out[lo : lo + chunk] = eq.sum(axis=(1, 2))
    return out


def similar_skill_pairs(
    skills: Iterable[tuple[int, str, str]], threshold: float
) -> list[tuple[int, int, float]]:
    """(skill id a, skill id b, jaccard) with a < b, for ``(id, name, description)`` rows, by id."""
    rows = sorted(skills)
    ids = [r[0] for r in rows]
    tokens = (_TOKEN.findall(f"{name} {desc}".casefold()) for _, name, desc in rows)
    return [(ids[i], ids[j], sim) for i, j, sim in _join(tokens, len(rows), threshold, SUBSET_CAP)]
