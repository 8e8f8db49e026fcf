"""The package-free WordLlama path must give the package's vectors bit for bit.

``kaos_dream.embedding.wordllama_fast`` tokenizes with its own BPE over tables cached from the
package's tokenizer file and pools rows of the memory-mapped weights; any difference in a token or a
rounding step would change stored vectors or query vectors and so what search finds. The reference
is the wordllama package itself (its ``tokenizers`` tokenizer and ``embed(norm=False)``), on the
bench texts and on seeded random strings full of the cases BPE gets wrong first: special tokens,
spaces, byte fallback for characters outside the vocabulary, empty text.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kaos_dream.embedding import wordllama_fast
from kaos_dream.embedding.wordllama_model import WordLlamaEmbedder

from .conftest import PROJECT_ROOT

pytestmark = pytest.mark.skipif(importlib.util.find_spec("wordllama") is None,
                                reason="the semantic extra (wordllama) is not installed")
BENCH = Path("/work/shared/bench-data/kaos")
TRICKY = [
    "", " ", "  ", "a", "deploy postgres retry", "  leading and  double  spaces ", "trailing ",
    "<s>", "</s>", "<unk>", "<s>hello</s> <unk> x<s>y", "a</s >b", "<<s>>", "naïve café – 日本語 🚀 emoji",
    "tabs\tand\nnew\r\nlines", "\x00\x01\x7f control", "Zürich Straße ΑΒΓ Ωμέγα", "ﬁ ligature ＡＢＣ fullwidth",
    "e\u0301 combining", "👩‍💻 zero width joiner", "x" * 300, "deploy-app_v2.1 (canary)!",
]


def corpus() -> list[str]:
    texts = list(TRICKY)
    path = BENCH / "realistic_retrieval_bench.json"
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        texts += [f"{s['name']} {s['description']}" for s in data["skills"]] + [q["query"] for q in data["queries"]]
    rng = random.Random(18)
    alphabet = list("abcdefghijklmnopqrstuvwxyz  ABCXYZ0123456789.,-_!?'\"\n\t<>/s") + list("éüß日本語🚀Ωж\u0301")
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))) for _ in range(400)]
    return texts


@pytest.fixture(scope="module")
def package():
    import wordllama
    from wordllama import WordLlama

    return WordLlama.load(config=wordllama_fast.CONFIG, dim=wordllama_fast.DIM,
                          cache_dir=Path(wordllama.__file__).parent, disable_download=True)


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("cache")
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        model = wordllama_fast.load()
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME")
        else:
            os.environ["XDG_CACHE_HOME"] = saved
    assert model is not None
    return model


def test_tokens_are_the_packages(fast, package) -> None:
    whole = dataclasses.replace(fast.tables, split_words=False)  # one BPE over the whole text, no memo
    assert fast.tables.split_words  # this vocabulary lets words be encoded one by one
    for text in corpus():
        expected = package.tokenizer.encode(text, add_special_tokens=False).ids
        assert fast.tables.encode(text) == expected, repr(text)
        assert whole.encode(text) == expected, repr(text)


def test_vectors_are_bit_identical_one_by_one_and_in_batches(fast, package) -> None:
    texts = corpus()
    batch = package.embed(texts, norm=False)  # padded batches of 64, as reindex embeds them
    for text, row in zip(texts, batch, strict=True):
        single = fast.embed_one(text)
        assert single.dtype == np.float32 and single.tobytes() == row.tobytes(), repr(text)
        assert single.tobytes() == package.embed([text], norm=False)[0].tobytes(), repr(text)
    many = fast.embed_many(texts)  # the dream's backfill and reindex: all texts pooled together
    assert many.dtype == np.float32 and many.shape == batch.shape
    for text, row, mine in zip(texts, batch, many, strict=True):
        assert mine.tobytes() == row.tobytes(), repr(text)
    mixed = ["", "x" * 3999, texts[30], "", texts[5]]  # empty texts, lengths far apart, any order
    assert fast.embed_many(mixed).tobytes() == package.embed(mixed, norm=False).tobytes()
    assert fast.embed_many([]).shape == (0, wordllama_fast.DIM)


def test_embedder_gives_the_same_unit_vectors_on_both_paths(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    import wordllama

    from kaos_dream.embedding.base import normalise_rows

    embedder = WordLlamaEmbedder()
    assert embedder.model_version == wordllama.__version__  # stored beside every vector: must not change
    texts = corpus()[:80]
    batch = embedder.embed(texts)  # more than one text: pooled together, still without the package
    assert embedder._model is None
    expected = normalise_rows(embedder._load_package().embed(texts, norm=False, return_np=True))
    assert batch.tobytes() == expected.tobytes()
    for text, row in zip(texts, batch, strict=True):
        assert embedder.embed([text])[0].tobytes() == row.tobytes(), repr(text)


def test_cache_is_written_once_and_rebuilt_when_stale_or_damaged(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = wordllama_fast.load()
    assert first is not None
    folder = wordllama_fast.package_folder()
    cached = wordllama_fast.cache_path(wordllama_fast._signature(folder))
    assert cached.parent == tmp_path / "kaos-dream"
    blob = cached.read_bytes()
    assert wordllama_fast.BpeTables.from_bytes(blob, wordllama_fast._signature(folder)) is not None
    assert wordllama_fast.BpeTables.from_bytes(blob, "another signature") is None  # a reinstall: rebuilt
    for damaged in (blob[:-5], blob[:100], b"", b"\xff" * 64):
        assert wordllama_fast.BpeTables.from_bytes(damaged, wordllama_fast._signature(folder)) is None
        cached.write_bytes(damaged)
        again = wordllama_fast.load()
        assert again is not None and again.tables.encode("deploy canary") == first.tables.encode("deploy canary")
        assert cached.read_bytes() == blob  # rewritten whole


def test_two_installations_keep_one_cache_file_each(tmp_path: Path, monkeypatch) -> None:
    """Two virtualenvs of one user used to share one cache file and rebuild it for each other on every
    start (~0.5 s each time); now each installation's file is named by its signature."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    real = wordllama_fast.package_folder()
    installs = []
    for name in ("venv-a", "venv-b"):
        folder = tmp_path / name / "wordllama"
        for rel in (wordllama_fast.TOKENIZER_FILE, wordllama_fast.WEIGHTS_FILE, wordllama_fast.VERSION_FILE):
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).symlink_to(real / rel)
        installs.append(folder)
    models = [wordllama_fast.load(folder) for folder in installs]
    paths = [wordllama_fast.cache_path(wordllama_fast._signature(folder)) for folder in installs]
    assert paths[0] != paths[1] and all(p.exists() for p in paths)
    for p in paths:
        os.utime(p, ns=(1_000_000_000, 1_000_000_000))  # an old mtime: a rewrite would show
    again = [wordllama_fast.load(folder) for folder in installs]
    assert [p.stat().st_mtime_ns for p in paths] == [1_000_000_000, 1_000_000_000]  # read, not rebuilt
    for first, second in zip(models, again, strict=True):
        assert first is not None and second is not None
        assert second.tables.encode("deploy canary") == first.tables.encode("deploy canary")


def test_unwritable_cache_costs_time_not_results(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    model = wordllama_fast.load()
    assert model is not None and model.tables.encode("retry") == model.tables.encode("retry")


def test_missing_files_fall_back_to_the_package(tmp_path: Path) -> None:
    (tmp_path / "tokenizers").mkdir()
    assert wordllama_fast.load(tmp_path) is None  # no weights, no tokenizer: the package decides


def test_a_search_embeds_without_importing_the_package(tmp_path: Path, kaos) -> None:
    db = tmp_path / "lib.db"
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert kaos("skill", "add", "deploy-app", "-d", "ship the service to production", db=db, env=env).returncode == 0
    code = ("import sys, json\n"
            "sys.argv = ['kaos', '--db', sys.argv[1], 'search', 'release software to prod servers', '--json']\n"
            "from kaos_dream.entry import run\nrun()\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('wordllama', 'tokenizers', 'safetensors', 'requests'))))")
    proc = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT), **env})
    assert proc.returncode == 0, proc.stderr
    hits_json, loaded = proc.stdout.rsplit("\n", 2)[0], proc.stdout.strip().splitlines()[-1]
    assert [h["name"] for h in json.loads(hits_json)] == ["deploy-app"]  # found by meaning: no word is shared
    assert json.loads(loaded) == []
