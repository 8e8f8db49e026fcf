"""Settings read from the environment, with documented defaults.

Library code never reads ``os.environ`` directly: it gets a :class:`Settings`, so tests and
benchmarks can pass their own.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from .errors import InvalidInputError

# SQLite stores 64-bit signed integers; a setting past them fails deep inside a query otherwise.
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_FALSE_WORDS = {"0", "false", "no", "off"}
_TRUE_WORDS = {"1", "true", "yes", "on"}


def parse_bool(text: str, name: str) -> bool:
    word = text.strip().lower()
    if word in _FALSE_WORDS:
        return False
    if word in _TRUE_WORDS:
        return True
    raise InvalidInputError(f"{name}={text!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


# Variables kaos knows besides the Settings fields: the CLI's traceback switch, and the report browser
# test's screenshot target (set around `pytest`, so every `kaos` the test starts inherits it).
OTHER_VARIABLES = ("KAOS_DEBUG", "KAOS_REPORT_SCREENSHOT", "KAOS_PG_POOL")


def variable_name(field_name: str) -> str:
    return "KAOS_" + field_name.upper()


def known_variables() -> tuple[str, ...]:
    """Every ``KAOS_…`` environment variable kaos reads, in Settings field order."""
    names = [variable_name(f.name) for f in fields(Settings) if f.name not in ("extra", "anthropic_api_key")]
    return (*names, *OTHER_VARIABLES)


def unknown_variables(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None]]:
    """``KAOS_…`` variables that kaos does not read (a typo such as KAOS_DREAM_TRESHOLD), each with
    the closest known name when one is close enough to be the intended one."""
    env = os.environ if environ is None else environ
    known = known_variables()
    unknown = sorted(k for k in env if k.startswith("KAOS_") and k not in known)
    if not unknown:
        return []
    import difflib

    return [(name, next(iter(difflib.get_close_matches(name, known, n=1, cutoff=0.8)), None)) for name in unknown]


def describe_settings(environ: Mapping[str, str] | None = None) -> list[dict[str, object]]:
    """Every setting with its effective value and where it came from (``env`` or ``default``).

    The API key is reported as set or not, never shown.
    """
    env = os.environ if environ is None else environ
    current = Settings.from_env(env)
    rows: list[dict[str, object]] = []
    for f in fields(Settings):
        if f.name == "extra":
            continue
        name = "ANTHROPIC_API_KEY" if f.name == "anthropic_api_key" else variable_name(f.name)
        value: object = getattr(current, f.name)
        if f.name == "anthropic_api_key":
            value = "set" if value else "not set"
        source = "env" if env.get(name, "") != "" else "default"
        rows.append({"variable": name, "value": value, "default": getattr(Settings, f.name, None)
                     if f.name != "anthropic_api_key" else "not set", "source": source})
    return rows


@dataclass(frozen=True)
class Settings:
    """Tunables. Each field maps to an environment variable ``KAOS_<FIELD NAME IN CAPITALS>``."""

    db: str = "kaos.db"
    busy_timeout_ms: int = 10_000
    synchronous: str = "NORMAL"
    # Size cap for the library file in SQLite pages (4096 bytes each); 0 = no cap. A write that would
    # grow the file past it fails with "database or disk is full" and is rolled back (KAOS_MAX_PAGE_COUNT).
    max_page_count: int = 0
    dream_auto: bool = True
    # Policies: an action approved at least this share of the time over at least this many
    # human-decided intents becomes a policy (KAOS_POLICY_MIN_APPROVAL, KAOS_POLICY_MIN_SUPPORT).
    policy_min_approval: float = 0.9
    policy_min_support: int = 3
    # Validation gate thresholds (Kairos appendix): KAOS_GROUNDING_THRESHOLD, KAOS_LOGICAL_THRESHOLD,
    # KAOS_ALIGNMENT_THRESHOLD; KAOS_CO_USE_THRESHOLD for the co-use validator (validation/co_use.py).
    grounding_threshold: float = 0.7
    co_use_threshold: float = 0.15
    logical_threshold: float = 0.7
    alignment_threshold: float = 0.5
    # Failure intelligence.
    systemic_threshold: int = 5  # distinct agents on one fingerprint within the window raise an alert
    systemic_window_s: float = 120.0  # sliding window for the systemic detector, seconds
    fix_min_attempts: int = 5  # a fix is judged only after this many reported outcomes
    fix_min_success: float = 0.5  # ... and withdrawn when its success rate is below this
    failure_sample_chars: int = 2000  # bound on the stored message sample (the full hash is kept)
    # Optional LLM (Anthropic). The key comes from ANTHROPIC_API_KEY; without it the LLM parts are off.
    llm: bool = True  # KAOS_LLM=0 turns every LLM call off even when a key is set
    llm_model: str = "claude-haiku-4-5"
    llm_timeout_s: float = 10.0
    llm_base_url: str = ""  # empty: the SDK's default endpoint
    llm_max_tokens: int = 400
    llm_max_retries: int = 1  # retries within the KAOS_LLM_TIMEOUT_S deadline (never past it)
    llm_max_reply_bytes: int = 65_536  # a larger response body is dropped unread (400 tokens are ~2 kB)
    anthropic_api_key: str = field(default="", repr=False)
    # Graph: gate strength β₀ for gated/adaptive activation (10: the smallest β of the
    # sweep at which both modes silence every blocked hub of demo_causal_bench's stress set and rank
    # every open hub above every blocked one); online-learning rate η;
    # confidence lost per dream cycle by causal edges with no new evidence (λ_neglect); the strength a
    # newly observed edge starts from; sparsification tolerance ε and the weight strategy's
    # "weak" and "dormant" limits.
    graph_beta: float = 10.0
    graph_learning_rate: float = 0.1
    graph_neglect_rate: float = 0.02
    graph_evidence_initial: float = 0.5
    graph_prune_epsilon: float = 0.02
    graph_prune_weak: float = 0.2
    graph_prune_dormant_days: float = 30.0
    # Dream consolidation (kaos_dream/dream). Defaults are the project's tuned constants.
    dream_threshold: int = 100  # completed episodes between automatic dry-run passes
    dream_auto_budget_ms: float = 20.0  # an automatic pass estimated above this runs in a detached process
    dream_lease_s: float = 120.0  # how long a run's lease lasts without a heartbeat
    dream_promote_hits: int = 5  # memory retrieved this often -> promote proposal
    dream_prune_min_uses: int = 6  # prune needs at least this many outcomes ...
    dream_prune_max_success: float = 0.4  # ... and a success rate at or below this
    # ... failing by their own outcomes for at least this many distinct agents (episodes): one agent alone
    # never deprecates a skill others rely on (KAOS_DREAM_PRUNE_MIN_AGENTS).
    dream_prune_min_agents: int = 3
    dream_promote_min_agents: int = 3  # a promotion needs hits from this many distinct agents
    # Principals (issue 33): who writes. "Distinct agents" above means distinct principals, so one
    # client that opens many episodes is one vote. KAOS_PRINCIPAL pins the identity (the CLI's
    # --principal, `kaos mcp serve --principal`); empty: the OS user and host (user@host).
    principal: str = ""
    principal_max_open_episodes: int = 256  # running episodes one principal may have started at once
    # An episode still running this long after it started is stale: it no longer counts against its
    # principal's open episodes, and the next `dream run --apply` marks it killed (a crashed client).
    episode_stale_after_s: float = 21_600.0
    dream_auto_promote: bool = False  # off: promotions wait for `kaos dream promotions --accept`, like merges
    dream_merge_jaccard: float = 0.65  # token Jaccard between two live skills -> merge proposal
    dream_emergent_min: float = 3.0  # co-activations before an emergent co_occurs_with edge
    dream_emergent_step: float = 0.1  # emergent strength = min(cap, step x count)
    dream_emergent_cap: float = 0.5
    dream_ltd_delta: float = 0.05  # LTD per cycle: s -= delta * (1 - exp(-c / tau))
    dream_ltd_tau: float = 5.0
    dream_strength_floor: float = 0.1
    # Search ranking. rank: weighted (default, chosen by demo_neuroplasticity_bench),
    # wilson (the seed formula exactly) or bm25 (lexical order).
    rank: str = "weighted"
    rank_alpha: float = 3.0  # weight of the Wilson lower bound in the usage factor
    rank_half_life_days: float = 14.0  # recency half-life of the seed formula (wilson) and of memories' edits
    rank_z: float = 1.96  # Wilson confidence (95 %)
    rank_floor: float = 0.01  # the seed formula's (wilson) BM25 floor; the default ranking has none
    rank_task_context: bool = True  # weighted: use the outcomes of the same task when it has history
    # Evidence ages: an outcome's weight halves with every `half-life` later outcomes of the
    # same record that contradict it (failures after a success, successes after a failure); 0 = the
    # all-time record (KAOS_EVIDENCE_HALF_LIFE). 1.0 chosen by demo_neuroplasticity_bench's drift sweep.
    evidence_half_life: float = 1.0
    explore_seed: int = 0  # seed of search --explore's Thompson draws when none is given (KAOS_EXPLORE_SEED)
    rank_pool: int = 50  # weighted ranking re-scores at most this many lexical candidates per kind
    rank_pool_min: int = 20  # coordination levels are relaxed until at least this many candidates match
    # Semantic retrieval (kaos_dream/embedding, search/semantic.py): on when the model is installed
    # (KAOS_SEMANTIC=0 turns it off); the model (wordllama; minilm, opt-in; or the hash-trigram baseline);
    # how many nearest vectors join the lexical candidates; a semantic-only candidate's relevance is
    # weight x R x s, s rising from 0 at the threshold cosine to 1 at the full cosine (search/semantic.py;
    # chosen by demo_semantic_retrieval_bench).
    semantic: bool = True
    embedding_model: str = "wordllama"
    semantic_k: int = 20
    # Vectors of one kind from which a search asks an ANN graph for candidates (issue 35; needs the
    # ``scale`` extra and a saved graph); 0: always exact. See kaos_dream/embedding/ann.py and docs/scale.md
    # (its recall on the fast tier's vectors is why it is not used sooner).
    ann_min_rows: int = 200_000
    semantic_weight: float = 0.9
    semantic_threshold: float = 0.1
    semantic_full: float = 0.5
    # The strong tier (issue 22): a slower, better model whose vectors are never computed on a write
    # but backfilled by `dream run --apply` (strong_backfill_rows rows per pass, in a phase of its own,
    # at the lowest CPU priority; never bounded by time, so a pass does not depend on the machine's
    # speed) and by `kaos db reindex`. A search that takes the
    # semantic path scores a row by its strong vector when it has one, else by its fast one; each model
    # has its own threshold and full cosine (chosen on demo_semantic_retrieval_bench's tuning set).
    # "none" turns the tier off.
    strong_embedding_model: str = "minilm"
    strong_semantic_threshold: float = 0.1
    strong_semantic_full: float = 0.5
    strong_backfill_rows: int = 1024
    # Search returns no hit whose calibrated relevance (search/relevance.py) is below this
    # (KAOS_MIN_RELEVANCE, 0 keeps every hit); the default was chosen on the tuning sets.
    min_relevance: float = 0.025
    ltp_eta: float = 0.1  # Hebbian strengthening rate at episode end (half for skill x memory pairs)
    # MCP server (kaos mcp serve): the episodes a server may act on besides those it started
    # (comma-separated ids, KAOS_MCP_AGENTS), and the longest text skill_apply returns (KAOS_MCP_MAX_RENDER_CHARS;
    # the default lets a template at the 1M-character limit render, and keeps a 100 MB render from
    # blocking the server).
    mcp_agents: str = ""
    mcp_max_render_chars: int = 1_000_000
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``KAOS_<FIELD>`` variables (and ANTHROPIC_API_KEY); an unparsable or out-of-range
        value is an InvalidInputError naming the variable."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            if f.name in ("extra", "anthropic_api_key"):
                continue
            key = "KAOS_" + f.name.upper()
            if key not in env or env[key] == "":
                continue
            raw = env[key]
            default = getattr(cls, f.name)
            if isinstance(default, bool):
                values[f.name] = parse_bool(raw, key)
            elif isinstance(default, int):
                try:
                    values[f.name] = int(raw)
                except ValueError:
                    raise InvalidInputError(f"{key}={raw!r} is not a whole number") from None
            elif isinstance(default, float):
                try:
                    values[f.name] = float(raw)
                except ValueError:
                    raise InvalidInputError(f"{key}={raw!r} is not a number") from None
            else:
                values[f.name] = raw
        if env.get("ANTHROPIC_API_KEY"):
            values["anthropic_api_key"] = env["ANTHROPIC_API_KEY"]
        extra = {k: v for k, v in env.items() if k.startswith("KAOS_")}
        settings = cls(extra=extra, **values)  # type: ignore[arg-type]
        settings.validate()
        return settings

    def validate(self) -> None:
        """Refuse values outside their documented ranges (and every non-finite float)."""
        for f in fields(self):
            value = getattr(self, f.name)
            # nan passes every comparison below (and becomes NaN scores, invalid JSON or a TypeError
            # later); inf makes windows, budgets and weights meaningless. Refuse both for every float.
            if isinstance(value, float) and not math.isfinite(value):
                raise InvalidInputError(f"KAOS_{f.name.upper()}={value} must be a finite number")
            if isinstance(value, int) and not isinstance(value, bool) and not _INT64_MIN <= value <= _INT64_MAX:
                raise InvalidInputError(
                    f"KAOS_{f.name.upper()}={value} is out of range (whole numbers from {_INT64_MIN} to {_INT64_MAX})"
                )
        if self.synchronous.upper() not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
            raise InvalidInputError(
                f"KAOS_SYNCHRONOUS={self.synchronous!r} must be OFF, NORMAL, FULL or EXTRA"
            )
        if self.systemic_threshold < 1:
            raise InvalidInputError("KAOS_SYSTEMIC_THRESHOLD must be at least 1")
        if self.systemic_window_s <= 0:
            raise InvalidInputError("KAOS_SYSTEMIC_WINDOW_S must be positive")
        if self.fix_min_attempts < 1 or not 0 <= self.fix_min_success <= 1:
            raise InvalidInputError("KAOS_FIX_MIN_ATTEMPTS must be >= 1 and KAOS_FIX_MIN_SUCCESS within [0, 1]")
        if self.failure_sample_chars < 200:
            raise InvalidInputError("KAOS_FAILURE_SAMPLE_CHARS must be at least 200")
        if self.llm_timeout_s <= 0 or self.llm_max_tokens < 16 or self.llm_max_retries < 0:
            raise InvalidInputError("KAOS_LLM_TIMEOUT_S must be positive, KAOS_LLM_MAX_TOKENS >= 16, retries >= 0")
        if self.mcp_max_render_chars < 1:
            raise InvalidInputError("KAOS_MCP_MAX_RENDER_CHARS must be at least 1")
        if self.llm_max_reply_bytes < 1024:
            raise InvalidInputError("KAOS_LLM_MAX_REPLY_BYTES must be at least 1024")
        if self.max_page_count < 0:
            raise InvalidInputError("KAOS_MAX_PAGE_COUNT must not be negative (0 means no limit)")
        if self.rank not in {"weighted", "wilson", "bm25"}:
            raise InvalidInputError(f"KAOS_RANK={self.rank!r} must be weighted, wilson or bm25")
        if self.rank_half_life_days <= 0 or self.rank_z <= 0 or self.rank_alpha < 0 or self.rank_floor < 0:
            raise InvalidInputError(
                "KAOS_RANK_HALF_LIFE_DAYS and KAOS_RANK_Z must be positive; KAOS_RANK_ALPHA and KAOS_RANK_FLOOR "
                "must not be negative"
            )
        if not 0 <= self.explore_seed < 2**32:
            raise InvalidInputError("KAOS_EXPLORE_SEED must be a whole number from 0 to 4294967295")
        if not 0.0 <= self.evidence_half_life <= 64.0:
            raise InvalidInputError("KAOS_EVIDENCE_HALF_LIFE must be between 0 (no aging) and 64 outcomes")
        if self.rank_pool < 1 or self.rank_pool_min < 1:
            raise InvalidInputError("KAOS_RANK_POOL and KAOS_RANK_POOL_MIN must be at least 1")
        if self.ann_min_rows < 0:
            raise InvalidInputError("KAOS_ANN_MIN_ROWS must not be negative (0 turns the ANN graph off)")
        if (self.semantic_k < 0 or self.semantic_weight < 0
                or not 0.0 <= self.semantic_threshold < self.semantic_full <= 1.0):
            raise InvalidInputError(
                "KAOS_SEMANTIC_K and KAOS_SEMANTIC_WEIGHT must not be negative; "
                "0 <= KAOS_SEMANTIC_THRESHOLD < KAOS_SEMANTIC_FULL <= 1"
            )
        if not 0.0 <= self.min_relevance <= 1.0:
            raise InvalidInputError(f"KAOS_MIN_RELEVANCE={self.min_relevance} must be a number from 0 to 1")
        if not 0.0 <= self.strong_semantic_threshold < self.strong_semantic_full <= 1.0:
            raise InvalidInputError("0 <= KAOS_STRONG_SEMANTIC_THRESHOLD < KAOS_STRONG_SEMANTIC_FULL <= 1")
        if self.strong_backfill_rows < 0:
            raise InvalidInputError("KAOS_STRONG_BACKFILL_ROWS must not be negative")
        if not 0.0 < self.ltp_eta <= 1.0:
            raise InvalidInputError("KAOS_LTP_ETA must be in (0, 1]")
        if self.busy_timeout_ms < 0:
            raise InvalidInputError("KAOS_BUSY_TIMEOUT_MS must not be negative")
        if self.graph_beta < 0:
            raise InvalidInputError("KAOS_GRAPH_BETA must not be negative")
        if not 0.0 < self.graph_learning_rate <= 1.0:
            raise InvalidInputError("KAOS_GRAPH_LEARNING_RATE must be in (0, 1]")
        if not 0.0 <= self.graph_neglect_rate < 1.0:
            raise InvalidInputError("KAOS_GRAPH_NEGLECT_RATE must be in [0, 1)")
        for name in ("grounding_threshold", "co_use_threshold", "logical_threshold", "alignment_threshold",
                     "policy_min_approval",
                     "graph_evidence_initial", "graph_prune_epsilon", "graph_prune_weak"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InvalidInputError(f"KAOS_{name.upper()} must be between 0 and 1")
        if self.dream_threshold < 1:
            raise InvalidInputError("KAOS_DREAM_THRESHOLD must be at least 1")
        if not 0.0 < self.dream_merge_jaccard <= 1.0:
            raise InvalidInputError("KAOS_DREAM_MERGE_JACCARD must be in (0, 1]")
        if not 0.0 <= self.dream_prune_max_success <= 1.0:
            raise InvalidInputError("KAOS_DREAM_PRUNE_MAX_SUCCESS must be in [0, 1]")
        if self.principal_max_open_episodes < 1:
            raise InvalidInputError("KAOS_PRINCIPAL_MAX_OPEN_EPISODES must be at least 1")
        if self.episode_stale_after_s <= 0:
            raise InvalidInputError("KAOS_EPISODE_STALE_AFTER_S must be positive")
        if self.dream_lease_s <= 0 or self.dream_ltd_tau <= 0:
            raise InvalidInputError("KAOS_DREAM_LEASE_S and KAOS_DREAM_LTD_TAU must be positive")
        if self.dream_prune_min_agents < 1 or self.dream_promote_min_agents < 1:
            raise InvalidInputError("KAOS_DREAM_PRUNE_MIN_AGENTS and KAOS_DREAM_PROMOTE_MIN_AGENTS must be at least 1")
        if self.dream_promote_hits < 1 or self.dream_prune_min_uses < 1 or self.dream_emergent_min <= 0:
            raise InvalidInputError("dream thresholds (promote hits, prune uses, emergent minimum) must be positive")
