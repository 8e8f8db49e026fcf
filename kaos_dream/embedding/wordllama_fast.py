"""WordLlama's query embedding without loading the wordllama package: the same vectors, ~1/50 of the CPU.

Loading the package for one query costs ~0.2 s of CPU: it imports ``requests`` and ``safetensors``,
parses a 1.8 MB tokenizer file (``tokenizers``, ~60 ms) and converts the whole 32000 x 256 float16
matrix to float32 (~90 ms), while a query needs a handful of rows. Here:

* the embedding matrix is memory-mapped straight from the wheel's ``.safetensors`` file (an 8-byte
  header length, a JSON header, then the raw little-endian array), so only the rows a query uses
  are read, and float16 -> float32 is exact, as in the package;
* the tokenizer is the package's own byte-level BPE (a Llama-2 SentencePiece vocabulary), applied
  by :class:`BpeTables`: the same normalisation (``▁`` prepended, spaces to ``▁``), the same
  special-token split, the same merge order (lowest rank first, leftmost on ties, as the
  ``tokenizers`` library does) and the same byte fallback. Its tables come from the package's
  tokenizer file once and are kept in a small cache file (``$XDG_CACHE_HOME/kaos-dream``), keyed by
  the size and mtime of the files they were built from, so a new wordllama release rebuilds them;
* pooling is the package's mean over token rows, written the same way, so the vectors are
  bit-identical (``tests/test_wordllama_fast.py`` checks tokens and vectors against the package).

:func:`load` returns None when any of this does not hold (files missing, a tokenizer this module does
not know how to apply): the caller then uses the package itself.
"""

from __future__ import annotations

import hashlib
import heapq
import importlib.util
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

CONFIG = "l2_supercat"
DIM = 256
TOKENIZER_FILE = f"tokenizers/{CONFIG}_tokenizer_config.json"
WEIGHTS_FILE = f"weights/{CONFIG}_{DIM}.safetensors"
VERSION_FILE = "_version.py"
TENSOR = "embedding.weight"
CACHE_FORMAT = 2  # bump when the cache layout changes
ID_BITS = 15  # token ids < 32768: a pair (left, right) packs into one int64 key
PRINCIPAL = "\u2581"  # SentencePiece's word marker
_SEGMENT = re.compile(f"{PRINCIPAL}*[^{PRINCIPAL}]*")  # a word: its markers, then everything up to the next one
_MARKER_INSIDE = re.compile(f"[^{PRINCIPAL}]{PRINCIPAL}")
WORD_MEMO = 50_000  # words remembered per process (then forgotten all at once)


def package_folder() -> Path | None:
    """The installed wordllama package's folder, found without importing it (its import costs ~0.1 s)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _signature(folder: Path) -> str:
    """Size and mtime of every file the tables and the version come from: changes with any reinstall."""
    parts = []
    for name in (TOKENIZER_FILE, WEIGHTS_FILE, VERSION_FILE):
        st = (folder / name).stat()
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return f"v{CACHE_FORMAT}|{folder}|" + "|".join(parts)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kaos-dream"


def cache_path(signature: str) -> Path:
    """The cache file of one installation: named by a hash of its signature, so two virtualenvs of one
    user (each its own wordllama folder) keep a file each instead of rebuilding each other's on every
    start (~0.5 s: the package import and the tokenizer file parse)."""
    digest = hashlib.sha256(signature.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return cache_dir() / f"wordllama-{CONFIG}-bpe-{digest}.bin"


class Unsupported(Exception):
    """The tokenizer file asks for something :class:`BpeTables` does not implement."""


@dataclass(frozen=True)
class BpeTables:
    """A BPE tokenizer as arrays: ``pair_keys`` (sorted ``left << 15 | right``) with ``pair_values``
    (``rank << 15 | merged id``), the single-character vocabulary, the special tokens, the unknown
    token and the byte-fallback ids (``byte_ids[b]``, -1 when absent)."""

    pair_keys: np.ndarray
    pair_values: np.ndarray
    chars: dict[str, int]
    specials: dict[str, int]
    unk_id: int
    byte_ids: tuple[int, ...]
    version: str
    split_words: bool = False
    _words: dict[str, list[int]] = field(default_factory=dict, init=False, compare=False, repr=False)
    _seen: dict[int, int] = field(default_factory=dict, init=False, compare=False, repr=False)

    # -- building -------------------------------------------------------------------------------
    @classmethod
    def from_tokenizer_file(cls, path: Path, version: str) -> BpeTables:
        config = json.loads(path.read_text(encoding="utf-8"))
        _check_supported(config)
        model = config["model"]
        vocab: dict[str, int] = model["vocab"]
        if max(vocab.values()) >= 1 << ID_BITS:
            raise Unsupported("vocabulary too large for packed pairs")
        pairs: dict[int, int] = {}
        for rank, merge in enumerate(model["merges"]):
            left, right = merge.split(" ") if isinstance(merge, str) else merge
            pairs[(vocab[left] << ID_BITS) | vocab[right]] = (rank << ID_BITS) | vocab[left + right]
        keys = np.array(sorted(pairs), dtype=np.int64)
        values = np.array([pairs[k] for k in keys.tolist()], dtype=np.int64)
        chars = {token: i for token, i in vocab.items() if len(token) == 1}
        specials = {t["content"]: int(t["id"]) for t in config.get("added_tokens") or []}
        byte_ids = tuple(vocab.get(f"<0x{b:02X}>", -1) for b in range(256))
        # No token holds the word marker after another character: no merge can join across the point
        # before a word, so words are encoded (and remembered) one by one with the same result.
        split = not any(_MARKER_INSIDE.search(token) for token in vocab)
        return cls(keys, values, chars, specials, int(vocab[model["unk_token"]]), byte_ids, version, split)

    # -- the cache file -------------------------------------------------------------------------
    def to_bytes(self, signature: str) -> bytes:
        header = json.dumps({"signature": signature, "version": self.version, "unk": self.unk_id,
                             "specials": self.specials, "bytes": list(self.byte_ids),
                             "chars": "".join(self.chars), "merges": len(self.pair_keys),
                             "split": self.split_words},
                            ensure_ascii=True).encode("ascii")
        char_ids = np.array(list(self.chars.values()), dtype="<i4")
        return b"".join([len(header).to_bytes(8, "little"), header, self.pair_keys.astype("<i8").tobytes(),
                         self.pair_values.astype("<i8").tobytes(), char_ids.tobytes()])

    @classmethod
    def from_bytes(cls, blob: bytes, signature: str) -> BpeTables | None:
        """The tables in a cache file, or None when it was built from other files or is damaged."""
        try:
            size = int.from_bytes(blob[:8], "little")
            header = json.loads(blob[8 : 8 + size])
            if header["signature"] != signature:
                return None
            n, chars = int(header["merges"]), header["chars"]
            body = 8 + size
            expected = body + 16 * n + 4 * len(chars)
            if len(blob) != expected:
                return None
            keys = np.frombuffer(blob, dtype="<i8", count=n, offset=body)
            values = np.frombuffer(blob, dtype="<i8", count=n, offset=body + 8 * n)
            char_ids = np.frombuffer(blob, dtype="<i4", count=len(chars), offset=body + 16 * n)
            return cls(keys, values, dict(zip(chars, char_ids.tolist(), strict=True)),
                       {str(k): int(v) for k, v in header["specials"].items()}, int(header["unk"]),
                       tuple(int(b) for b in header["bytes"]), str(header["version"]), bool(header["split"]))
        except (ValueError, KeyError, TypeError):
            return None

    # -- tokenizing -----------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` as the package's tokenizer gives them (``add_special_tokens=False``)."""
        ids: list[int] = []
        position = 0
        if self.specials:
            for match in _special_pattern(tuple(self.specials)).finditer(text):
                ids += self._encode_piece(text[position : match.start()])
                ids.append(self.specials[match.group(0)])
                position = match.end()
        ids += self._encode_piece(text[position:])
        return ids

    def _encode_piece(self, piece: str) -> list[int]:
        if not piece:
            return []
        word = PRINCIPAL + piece.replace(" ", PRINCIPAL)
        if not self.split_words:
            return self._encode_word(word)
        ids: list[int] = []
        for segment in _SEGMENT.findall(word):
            if not segment:
                continue
            found = self._words.get(segment)
            if found is None:
                if len(self._words) >= WORD_MEMO:
                    self._words.clear()
                found = self._words[segment] = self._encode_word(segment)
            ids += found
        return ids

    def _encode_word(self, word: str) -> list[int]:
        symbols: list[int] = []
        unk = False
        for ch in word:
            token = self.chars.get(ch)
            if token is not None:
                if unk:
                    symbols.append(self.unk_id)
                    unk = False
                symbols.append(token)
                continue
            fallback = [self.byte_ids[b] for b in ch.encode("utf-8")]
            if all(b >= 0 for b in fallback):
                symbols += fallback  # as the tokenizers library does, a pending unknown stays pending
                continue
            unk = True  # consecutive unknown characters fuse into one unknown token
        if unk:
            symbols.append(self.unk_id)
        return self._merge(symbols)

    def _pair(self, left: int, right: int) -> int:
        """``rank << 15 | merged id`` of the merge of ``left`` and ``right``, -1 when there is none;
        each pair is looked up in the sorted keys once per process, then remembered."""
        key = (left << ID_BITS) | right
        value = self._seen.get(key)
        if value is None:
            at = int(self.pair_keys.searchsorted(key))
            hit = at < len(self.pair_keys) and int(self.pair_keys[at]) == key
            value = self._seen[key] = int(self.pair_values[at]) if hit else -1
        return value

    def _merge(self, symbols: list[int]) -> list[int]:
        """Apply the merges: always the lowest-ranked pair present, the leftmost one on a tie."""
        n = len(symbols)
        ids = symbols[:]
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = [True] * n
        pair, push, mask = self._pair, heapq.heappush, (1 << ID_BITS) - 1
        queue: list[tuple[int, int, int]] = []
        for pos in range(n - 1):
            value = pair(ids[pos], ids[pos + 1])
            if value >= 0:
                queue.append((value >> ID_BITS, pos, value & mask))
        heapq.heapify(queue)
        while queue:
            _, pos, new_id = heapq.heappop(queue)
            if not alive[pos] or nxt[pos] >= n:
                continue
            right = nxt[pos]
            current = pair(ids[pos], ids[right])
            if current < 0 or current & mask != new_id:
                continue  # an entry made stale by an earlier merge
            ids[pos] = new_id
            alive[right] = False
            following = nxt[pos] = nxt[right]
            if following < n:
                prv[following] = pos
            before = prv[pos]
            if before >= 0:
                value = pair(ids[before], new_id)
                if value >= 0:
                    push(queue, (value >> ID_BITS, before, value & mask))
            if following < n:
                value = pair(new_id, ids[following])
                if value >= 0:
                    push(queue, (value >> ID_BITS, pos, value & mask))
        return [ids[i] for i in range(n) if alive[i]]


_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}


def _special_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    """Leftmost-longest match of the special tokens (the tokenizers library's added-token split)."""
    pattern = _PATTERNS.get(tokens)
    if pattern is None:
        pattern = _PATTERNS[tokens] = re.compile("|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)))
    return pattern


def _check_supported(config: dict[str, Any]) -> None:
    """Refuse a tokenizer file whose pipeline differs from the one :class:`BpeTables` applies."""
    model = config.get("model") or {}
    expected_model = {"type": "BPE", "dropout": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True}
    for key, value in expected_model.items():
        if model.get(key) != value:
            raise Unsupported(f"model.{key} is {model.get(key)!r}")
    if model.get("ignore_merges", False):
        raise Unsupported("model.ignore_merges")
    normalizer = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": PRINCIPAL},
        {"type": "Replace", "pattern": {"String": " "}, "content": PRINCIPAL}]}
    if config.get("normalizer") != normalizer or config.get("pre_tokenizer") is not None:
        raise Unsupported("normalizer or pre-tokenizer")
    for token in config.get("added_tokens") or []:
        if token.get("normalized") or token.get("lstrip") or token.get("rstrip") or token.get("single_word"):
            raise Unsupported(f"added token {token.get('content')!r}")


def _read_version(folder: Path) -> str:
    """The package's version, as ``wordllama.__version__`` says it (read once, when the cache is built)."""
    import wordllama

    return str(getattr(wordllama, "__version__", "unknown"))


def load_tables(folder: Path) -> BpeTables:
    """The tokenizer tables: from the cache when it matches the installed files, else built from the
    package's tokenizer file and written to the cache (atomically; an unwritable cache only costs time)."""
    signature = _signature(folder)
    path = cache_path(signature)
    try:
        tables = BpeTables.from_bytes(path.read_bytes(), signature)
    except OSError:
        tables = None
    if tables is not None:
        return tables
    tables = BpeTables.from_tokenizer_file(folder / TOKENIZER_FILE, _read_version(folder))
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".wordllama-", delete=False) as tmp:
            tmp.write(tables.to_bytes(signature))
        os.replace(tmp.name, path)
    except OSError:
        pass  # a read-only home: the tables are rebuilt next time, the vectors are the same
    return tables


def map_weights(path: Path) -> np.ndarray:
    """The ``(vocabulary, dim)`` float16 matrix of a safetensors file, memory-mapped (nothing is read yet)."""
    with path.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    entry = header[TENSOR]
    if entry["dtype"] != "F16" or len(entry["shape"]) != 2:
        raise Unsupported(f"weights are {entry['dtype']} {entry['shape']}")
    start, end = entry["data_offsets"]
    rows, dim = entry["shape"]
    if end - start != rows * dim * 2:
        raise Unsupported("weights size does not match their shape")
    return np.memmap(path, dtype="<f2", mode="r", offset=8 + size + start, shape=(rows, dim))


class FastWordLlama:
    """Token ids by :class:`BpeTables`, rows from the memory-mapped matrix, the package's mean pooling."""

    def __init__(self, tables: BpeTables, weights: np.ndarray) -> None:
        self.tables = tables
        self.weights = weights
        self.version = tables.version

    def embed_one(self, text: str) -> np.ndarray:
        """One text's pooled vector (not normalised), exactly as ``WordLlamaInference.embed(norm=False)``."""
        input_ids = np.array([self.tables.encode(text)], dtype=np.int32)
        attention_mask = np.ones(input_ids.shape, dtype=np.float32)
        np.clip(input_ids, 0, self.weights.shape[0] - 1, out=input_ids)
        rows = self.weights[input_ids.reshape(-1)]
        x = np.asarray(rows, dtype=np.float32).reshape(*input_ids.shape, self.weights.shape[1])
        mask_sum = np.maximum(attention_mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
        return (np.sum(x * attention_mask[..., np.newaxis], axis=1, dtype=np.float32) / mask_sum)[0]

    def embed_many(self, texts: list[str]) -> np.ndarray:
        """The pooled vectors of many texts (not normalised), bit for bit :meth:`embed_one`'s row by row.

        numpy sums a text's token rows one after another (the token axis is not the contiguous one),
        so here too: texts ordered by token count, step k adds every still-long-enough text's k-th
        token row at once — the same additions in the same order, one vector operation per token
        position instead of a few per text; then the division by the token count. A text without
        tokens gives a zero row.
        """
        dim = self.weights.shape[1]
        encoded = [self.tables.encode(text) for text in texts]
        counts = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        flat = np.fromiter(itertools.chain.from_iterable(encoded), dtype=np.int32, count=int(counts.sum()))
        np.clip(flat, 0, self.weights.shape[0] - 1, out=flat)
        rows = np.asarray(self.weights[flat], dtype=np.float32).reshape(len(flat), dim)
        order = np.argsort(-counts, kind="stable")  # longest first: the texts still adding are a prefix
        starts = (np.cumsum(counts) - counts)[order]
        longest = counts[order]
        sums = np.zeros((len(texts), dim), dtype=np.float32)
        for k in range(int(longest[0]) if len(texts) else 0):
            active = int(np.searchsorted(-longest, -k, side="left"))  # texts with more than k tokens
            if k == 0:
                sums[:active] = rows[starts[:active]]
            else:
                sums[:active] += rows[starts[:active] + k]
        out = np.empty_like(sums)
        out[order] = sums / np.maximum(longest, 1).astype(np.float32)[:, np.newaxis]
        return out


def load(folder: Path | None = None) -> FastWordLlama | None:
    """The fast path for the installed package, or None when its files are missing or differ from
    what this module knows how to apply (the caller then loads the package itself)."""
    folder = folder or package_folder()
    if folder is None:
        return None
    try:
        weights = map_weights(folder / WEIGHTS_FILE)
        tables = load_tables(folder)
    except (OSError, ValueError, KeyError, TypeError, ImportError, Unsupported):
        return None
    if weights.shape[1] != DIM:
        return None
    return FastWordLlama(tables, weights)
