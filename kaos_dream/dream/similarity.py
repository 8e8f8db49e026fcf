"""Near-duplicate skills: exact token-Jaccard similarity join, without comparing every pair.

Tokenisation (the reference for merge proposals): the casefolded ``name + " " + description``,
split into maximal runs of letters and digits (``[^\\W_]+``), as a set. So ``sync-postgres-0`` gives
``{sync, postgres, 0}``. On the benchmark libraries this finds 0 pairs at 1k skills and exactly 9 pairs
at 10k skills with Jaccard >= 0.65.

Algorithm — a generalised prefix filter (after Wang, Li & Feng, SIGMOD 2012: an ℓ-prefix scheme):
tokens are ranked rarest first; tokens that occur in only one set can never be shared and are
dropped from the lists (they still count in the set's size). If ``J(x, y) >= t`` then
``|x ∩ y| >= o`` (``ceil(t·|x|)``, or tighter ``ceil(t(|x|+|y|)/(1+t))`` for a known size pair), and
the first ``ℓ`` shared tokens lie within the first ``L - o + ℓ`` tokens of each list, ``L`` being the
list's length (the set's shareable tokens). So every qualifying pair shares at least one ℓ-subset of
those prefixes: each set emits its prefix ℓ-subsets as hashed keys, equal keys give candidates, and
each candidate is verified exactly. ℓ = 1 is classic prefix filtering (best for rich vocabularies);
larger ℓ keeps candidate lists short when a few tokens are everywhere (the synthetic benchmark). ℓ is
chosen per size pair: the largest whose prefix subsets stay within a cap for the longest list of
either size (both sizes compute the same ℓ, so both emit the same keys). Hash collisions only add
candidates; verification is exact, so the answer equals the all-pairs scan.

Cost at 100k skills (the scale benchmark): one pass tokenises all texts (a byte translation for
ASCII), one dictionary pass gives token ids, and the rest is numpy over ~0.5M signatures and ~2k
candidates; the first merge detection took a regex call and a frozenset per text, ranked the whole
vocabulary as numpy strings and verified ~290k candidates.
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


_SEPARATOR = "\x00"  # between two texts in one joined string: never part of a token, casefolds to itself
_TOKEN_OR_SEPARATOR = re.compile(r"[^\W_]+|\x00")
# ASCII text: letters and digits kept (upper case folded to lower), the separator kept, the rest a space.
_ASCII_TABLE = bytes(
    b + 32 if 65 <= b <= 90 else b if (48 <= b <= 57 or 97 <= b <= 122 or b == 0) else 32 for b in range(256))


def _tokens_of_texts(texts: list[str]) -> tuple[list[str] | list[bytes], str | bytes | None]:
    """Every text's tokens (as :func:`tokenize` finds them, duplicates kept) in one flat list, texts
    parted by a separator token (returned second; None when there are no separators: one text).

    One pass over the joined texts instead of one regex call per text: ASCII texts (the usual case)
    by a byte translation and ``split`` (bytes tokens; bytes order equals str order for ASCII, so
    ties are broken as on str), others by one regex over the casefolded join (case folding maps one
    character at a time, so folding the join folds each text). A text that holds the separator
    itself makes the join ambiguous: then each text is tokenised on its own and parted the same way.
    """
    joined = _SEPARATOR.join(texts)
    if joined.count(_SEPARATOR) != len(texts) - 1:
        flat: list[str] | list[bytes] = []
        for i, text in enumerate(texts):
            if i:
                flat.append(_SEPARATOR + _SEPARATOR)  # cannot be a token (tokens have no separator)
            flat.extend(_TOKEN.findall(text.casefold()))
        return flat, _SEPARATOR + _SEPARATOR
    if joined.isascii():
        return joined.encode("ascii").translate(_ASCII_TABLE).replace(b"\x00", b" \x00 ").split(), b"\x00"
    return _TOKEN_OR_SEPARATOR.findall(joined.casefold()), _SEPARATOR


class _Prepared:
    """Sets as rank lists (rarest first, singletons dropped), padded into a matrix, plus full sizes.

    Built with numpy from one flat token list, so the per-token Python work is one dictionary lookup:
    either ``counts[i]`` tokens per set, or sets parted by a ``separator`` token; duplicates within a
    set are allowed. A token's id is the position of its first occurrence in the flat list. Ranks are
    those of ordering the whole vocabulary by (document frequency, token text), computed for the
    shared tokens only: tokens in one set sort first and are dropped, so a shared token's rank is
    the number of those plus its place among the shared ones.
    """

    def __init__(self, flat: Sequence[str] | Sequence[bytes], n: int, counts: np.ndarray | None = None,
                 separator: str | bytes | None = None) -> None:
        first: dict[object, int] = {}
        tok = np.fromiter(map(first.setdefault, flat, range(len(flat))), dtype=np.int64, count=len(flat))
        width_v = max(1, len(flat))
        if counts is not None:
            owner = np.repeat(np.arange(n, dtype=np.int64), counts)
        else:
            is_sep = tok == first.get(separator, -1)
            owner = np.cumsum(is_sep)[~is_sep]
            tok = tok[~is_sep]
        pairs = _distinct(owner * width_v + tok)  # distinct (set, token)
        owner, tok = pairs // width_v, pairs % width_v
        self.sizes = np.bincount(owner, minlength=n).astype(np.int64)
        df = np.bincount(tok, minlength=width_v)
        shared = np.flatnonzero(df > 1)  # a token in one set only can never be shared
        singletons = int(np.count_nonzero(df == 1))
        df_of = dict(zip(shared.tolist(), df[shared].tolist(), strict=True))
        order = sorted(df_of, key=lambda t: (df_of[t], flat[t]))  # rarest first, ties by token text
        rank = np.zeros(width_v, dtype=np.int64)
        rank[np.asarray(order, dtype=np.int64)] = np.arange(singletons, singletons + len(order), dtype=np.int64)
        keep = df[tok] > 1
        owner, ranks = owner[keep], rank[tok[keep]]
        width_r = max(1, singletons + len(order))
        code = np.sort(owner * width_r + ranks)
        owner, ranks = code // width_r, code % width_r
        self.lengths = np.bincount(owner, minlength=n).astype(np.int64)
        width = int(self.lengths.max()) if n else 0
        self.ranks = np.zeros((n, max(width, 1)), dtype=np.uint64)
        cols = np.arange(len(owner)) - np.repeat(np.cumsum(self.lengths) - self.lengths, self.lengths)
        self.ranks[owner, cols] = ranks.astype(np.uint64)

    @classmethod
    def from_token_lists(cls, token_lists: Iterable[Iterable[str]]) -> _Prepared:
        flat: list[str] = []
        counts: list[int] = []
        for tokens in token_lists:
            before = len(flat)
            flat.extend(tokens)
            counts.append(len(flat) - before)
        return cls(flat, len(counts), counts=np.asarray(counts, dtype=np.int64))

    @classmethod
    def from_texts(cls, texts: list[str]) -> _Prepared:
        flat, separator = _tokens_of_texts(texts)
        return cls(flat, len(texts), separator=separator)


def pair_overlap(a: int, b: int, threshold: float) -> int:
    """Smallest |x ∩ y| for which sets of sizes a and b reach the threshold: ceil(t(a+b)/(1+t))."""
    return max(1, math.ceil(threshold * (a + b) / (1.0 + threshold) - _EPS))


def pair_ell(a: int, b: int, overlap: int, cap: int, longest_a: int | None = None,
             longest_b: int | None = None) -> int:
    """Subset size ℓ for the size pair (a, b): the largest ℓ <= overlap whose prefix ℓ-subsets number at
    most ``cap`` for every set on both sides (ℓ = overlap means "all shared tokens must match").
    ``longest_a`` / ``longest_b``: the longest rank list among the sets of that size (default: the
    size); a list of L shareable tokens has an (L - overlap + ℓ)-prefix. Symmetric in a, b."""
    la = a if longest_a is None else longest_a
    lb = b if longest_b is None else longest_b
    best = 1
    for ell in range(1, overlap + 1):
        if math.comb(la - overlap + ell, ell) <= cap and math.comb(lb - overlap + ell, ell) <= cap:
            best = ell
    return best


def _mix(key: np.ndarray, values: np.ndarray) -> np.ndarray:
    key = (key ^ (values + np.uint64(1))) * _MIX
    return key ^ (key >> np.uint64(29))


def _signatures(prep: _Prepared, threshold: float, cap: int = SUBSET_CAP) -> tuple[np.ndarray, np.ndarray]:
    """(hashed key, set index) for every signature of every set.

    Short sets (<= SHORT_SET tokens) are matched per size pair (a, b): the required overlap o(a, b) is
    tight there, so signatures are the ℓ-subsets of the (L - o + ℓ)-prefix tagged with (a, b, ℓ), L
    being the set's own rank-list length (its shareable tokens: the o shared ones are among them, so
    the first ℓ of those in rank order come before the last o - ℓ). A list shorter than o emits
    nothing for the pair: it cannot reach the overlap. Longer sets, and the short sets that could
    partner one, also emit classic prefix tokens (ℓ = 1, o = ceil(t·a)), so every pair is covered by
    one scheme both of its sets emit.
    """
    groups: dict[tuple[int, int, int, int], list[np.ndarray]] = {}  # (tag a, tag b, plen, ell) -> sets
    present = set(np.flatnonzero(np.bincount(prep.sizes)).tolist()) if len(prep.sizes) else set()
    longest = {size: int(prep.lengths[prep.sizes == size].max()) for size in present}
    for size in sorted(present):
        if size == 0:
            continue
        members = np.flatnonzero(prep.sizes == size)
        lengths = prep.lengths[members]
        tags: list[tuple[int, int, int, int]] = []  # (tag a, tag b, overlap, ell)
        if size <= SHORT_SET:
            hi = min(SHORT_SET, math.floor(size / threshold + _EPS))
            for other in range(min_overlap(size, threshold), hi + 1):
                if other not in present:  # no set of that size: no partner to meet
                    continue
                o = pair_overlap(size, other, threshold)
                if o > min(longest[size], longest[other]):  # no list on one side is long enough
                    continue
                ell = pair_ell(size, other, o, cap, longest[size], longest[other])
                tags.append((min(size, other), max(size, other), o, ell))
        if size > threshold * SHORT_SET:
            tags.append((0, 0, min_overlap(size, threshold), 1))
        for tag_a, tag_b, o, ell in tags:
            plens = lengths - o + ell
            for plen in np.flatnonzero(np.bincount(np.maximum(plens, 0))).tolist():
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


def _candidate_pairs(keys: np.ndarray, owners: np.ndarray, n: int) -> np.ndarray:
    """Distinct (i, j), i < j, of sets sharing a key, as an (m, 2) array, sorted.

    Keys and owners are packed into one uint64 (the key's high bits, the owner in the low
    ``bit_length(n - 1)`` bits) and sorted as values, several times faster than an argsort; keys equal
    in their high bits share a bucket. Dropping key bits can only put more sets in one bucket (more
    candidates, all verified exactly), never fewer.
    """
    if len(keys) < 2:
        return np.empty((0, 2), dtype=np.int64)
    owner_bits = max(1, (n - 1).bit_length())
    packed = (keys >> np.uint64(owner_bits) << np.uint64(owner_bits)) | owners.astype(np.uint64)
    packed.sort()
    bucket = packed >> np.uint64(owner_bits)
    shared = np.flatnonzero(bucket[1:] == bucket[:-1])  # element i and i + 1 share a bucket
    if len(shared) == 0:
        return np.empty((0, 2), dtype=np.int64)
    # Keep only elements of buckets holding more than one, then enumerate pairs inside each bucket.
    member = np.zeros(len(packed), dtype=bool)
    member[shared] = True
    member[shared + 1] = True
    bucket = bucket[member]
    owners = (packed[member] & np.uint64((1 << owner_bits) - 1)).astype(np.int64)  # ascending in a bucket
    del member, shared, packed
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    lengths = np.diff(np.r_[starts, len(bucket)])
    del bucket
    after = np.repeat(starts + lengths, lengths) - np.arange(len(owners)) - 1  # later elements in the bucket
    total = int(after.sum())
    left = np.repeat(np.arange(len(owners)), after)
    first = np.repeat(np.cumsum(after) - after, after)
    right = left + 1 + (np.arange(total) - first)
    del first, after
    lo, hi = owners[left], owners[right]  # lo <= hi: owners ascend within a bucket
    keep = lo != hi
    base = np.int64(n)
    code = _distinct(lo[keep] * base + hi[keep])
    return np.stack([code // base, code % base], axis=1)


def similar_pairs(
    sets: Sequence[frozenset[str]], threshold: float, cap: int = 64
) -> list[tuple[int, int, float]]:
    """All (i, j, jaccard) with i < j and ``J(sets[i], sets[j]) >= threshold``, sorted by (i, j).

    Exactly the pairs :func:`brute_force_pairs` returns. ``cap`` bounds the signatures per size pair
    (1 forces classic prefix filtering; tests use it to exercise every path).
    """
    _check_threshold(threshold)
    if len(sets) < 2:
        return []
    return _join(_Prepared.from_token_lists(sets), threshold, cap)


def _check_threshold(threshold: float) -> None:
    if not 0.0 < threshold <= 1.0:
        raise ValueError("threshold must be in (0, 1]")


def _join(prep: _Prepared, threshold: float, cap: int) -> list[tuple[int, int, float]]:
    n = len(prep.sizes)
    keys, owners = _signatures(prep, threshold, cap)
    cand = _candidate_pairs(keys, owners, n)
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
    # Padding is -1 on the left and -2 on the right, so padded columns never compare equal.
    dtype = np.int32 if prep.ranks.max(initial=0) < np.iinfo(np.int32).max else np.int64
    cols = np.arange(width)
    left = prep.ranks.astype(dtype)
    left[cols[None, :] >= prep.lengths[:, None]] = -1
    right = np.where(left < 0, dtype(-2), left)
    for lo in range(0, len(cand), chunk):
        i, j = cand[lo : lo + chunk, 0], cand[lo : lo + chunk, 1]
        eq = left[i][:, :, None] == right[j][:, None, :]
        out[lo : lo + chunk] = np.count_nonzero(eq.reshape(len(i), -1), axis=1)
    return out


def similar_skill_pairs(
    skills: Iterable[tuple[int, str, str]], threshold: float
) -> list[tuple[int, int, float]]:
    """(skill id a, skill id b, jaccard) with a < b, for ``(id, name, description)`` rows, by id."""
    rows = sorted(skills)
    return [(rows[i][0], rows[j][0], sim) for i, j, sim in similar_row_pairs(rows, threshold)]


def similar_row_pairs(rows: Sequence[tuple[int, str, str]], threshold: float) -> list[tuple[int, int, float]]:
    """(index i, index j, jaccard) with i < j into ``rows`` of ``(id, name, description)``: the pairs of
    :func:`similar_skill_pairs` without re-sorting or copying rows the caller already holds in order."""
    _check_threshold(threshold)
    if len(rows) < 2:
        return []
    return _join(_Prepared.from_texts([f"{name} {desc}" for _, name, desc in rows]), threshold, SUBSET_CAP)
