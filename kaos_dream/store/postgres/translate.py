"""The stores' SQL, written once in SQLite's dialect, turned into PostgreSQL's.

The stores share one SQL text for both engines. Where the dialects differ, the difference is a
rule here, applied once per distinct statement (translations are cached by the connection):

* placeholders: ``?``, ``?N`` and ``:name`` become psycopg's named ``%(…)s`` (a literal ``%`` is
  doubled), and positional parameters are passed as ``p1, p2, …``;
* ``INSERT OR IGNORE`` → ``ON CONFLICT DO NOTHING``; ``INSERT OR REPLACE`` → an upsert on the
  table's primary key; in ``DO UPDATE SET`` a bare column means the stored row (SQLite's reading,
  ambiguous to PostgreSQL) and is qualified with the table's name;
* scalar ``max(a, b)`` / ``min(a, b)`` → ``GREATEST`` / ``LEAST``; ``group_concat`` →
  ``string_agg``; ``json_extract(x, '$.a.b')`` → ``x::jsonb #>> '{a,b}'``; ``json_each(x)`` → the
  array's elements (as ``bigint`` when ``x`` is a parameter: the stores pass id lists that way);
* ``LIKE`` → ``ILIKE`` (SQLite's LIKE ignores ASCII case); ``CAST(… AS REAL)`` → double precision,
  ``AS INTEGER`` → bigint (SQLite's are 64-bit); ``rowid`` → ``id``;
* an ``INSERT`` into a table with an identity column gets ``RETURNING id`` (the cursor's
  ``lastrowid``);
* a full-text candidate subquery (``SELECT rowid AS id, bm25(x_fts) AS b FROM x_fts WHERE x_fts
  MATCH ? … ORDER BY b, rowid [LIMIT ?]``) becomes the server-side BM25 ranking of
  :func:`..fulltext.ranking_sql` (same statistics as FTS5), whose parameters the connection fills from
  the FTS5 expression when it binds the statement.

Anything SQLite-only that has no rule here (``PRAGMA``, ``sqlite_master``, virtual tables) is not
translated: those call sites have their own PostgreSQL code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .fulltext import ranking_sql

_TOKEN = re.compile(
    r"""(?P<str>'(?:[^']|'')*')
      | (?P<ident>"(?:[^"]|"")*")
      | (?P<comment>--[^\n]*|/\*.*?\*/)
      | (?P<qnum>\?\d+)
      | (?P<q>\?)
      | (?P<named>(?<!:):[A-Za-z_]\w*)
      | (?P<word>[A-Za-z_][\w$]*)
      | (?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)
      | (?P<ws>\s+)
      | (?P<other>.)""",
    re.S | re.X,
)

_FTS = re.compile(
    r"\(\s*SELECT\s+(?:row)?id\s+AS\s+id\s*,\s*bm25\(\s*(?P<kind>skills|memories)_fts\s*\)\s+AS\s+b\s+"
    r"FROM\s+(?P=kind)_fts\s+WHERE\s+(?P=kind)_fts\s+MATCH\s+%\((?P<match>\w+)\)s\s*"
    r"(?P<live>AND\s+(?:row)?id\s+NOT\s+IN\s+\(\s*SELECT\s+id\s+FROM\s+skills\s+WHERE\s+deprecated\s*=\s*1\s*\)\s*)?"
    r"ORDER\s+BY\s+b\s*,\s*(?:row)?id(?:\s+LIMIT\s+%\((?P<limit>\w+)\)s)?\s*\)",
    re.I,
)


@dataclass(frozen=True)
class FullTextMatch:
    """A full-text subquery the connection evaluates itself: which index, which parameters hold the
    FTS5 expression and the limit, and whether deprecated skills are excluded."""

    kind: str  # "skill" or "memory"
    match: str
    limit: str | None
    live_only: bool
    slot: str  # the prefix of the ranking's parameters (fulltext.ranking_params)


@dataclass(frozen=True)
class Translation:
    sql: str
    returning: str | None  # the identity column appended as RETURNING, when the cursor needs lastrowid
    table: str | None  # the table an INSERT / UPDATE / DELETE writes
    verb: str  # the statement's first keyword, upper case
    fulltext: tuple[FullTextMatch, ...] = field(default=())
    explicit_identity: bool = False  # an INSERT that gives the identity column itself (an import)
    limits: tuple[str, ...] = ()  # parameters given to LIMIT / OFFSET (SQLite reads a negative LIMIT as none)


@dataclass(frozen=True)
class Catalog:
    """What translation needs to know of the schema: each table's columns, primary key and identity.
    ``rowid`` maps a table whose primary key is one integer column without an identity (a position set
    by a trigger, a key copied from another table) to that column: on SQLite such a column is the
    rowid, so ``lastrowid`` after an INSERT is its value."""

    columns: dict[str, tuple[str, ...]]
    primary_key: dict[str, tuple[str, ...]]
    identity: dict[str, str]
    rowid: dict[str, str] = field(default_factory=dict)


def _tokens(sql: str) -> list[tuple[str, str]]:
    return [(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(sql)]


def _word(token: tuple[str, str], *words: str) -> bool:
    return token[0] == "word" and token[1].lower() in words


def _next_code(tokens: list[tuple[str, str]], i: int) -> int:
    """Index of the first token at or after ``i`` that is not whitespace or a comment."""
    while i < len(tokens) and tokens[i][0] in ("ws", "comment"):
        i += 1
    return i


def _closing(tokens: list[tuple[str, str]], open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(tokens)):
        if tokens[j] == ("other", "("):
            depth += 1
        elif tokens[j] == ("other", ")"):
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced parentheses in SQL")


def _split_args(tokens: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    args: list[list[tuple[str, str]]] = [[]]
    depth = 0
    for tok in tokens:
        if tok == ("other", "("):
            depth += 1
        elif tok == ("other", ")"):
            depth -= 1
        if tok == ("other", ",") and depth == 0:
            args.append([])
        else:
            args[-1].append(tok)
    return args


def _text(tokens: list[tuple[str, str]]) -> str:
    return "".join(t[1] for t in tokens).strip()


def _is_placeholder(arg: list[tuple[str, str]]) -> bool:
    code = [t for t in arg if t[0] not in ("ws", "comment")]
    return len(code) == 1 and code[0][0] == "param"


def _functions(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Rewrite the function calls whose spelling differs, innermost first."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        name = tok[1].lower() if tok[0] == "word" else ""
        open_at = _next_code(tokens, i + 1)
        is_call = name in ("max", "min", "group_concat", "json_extract", "json_each", "printf") and (
            open_at < len(tokens) and tokens[open_at] == ("other", "("))
        if not is_call or (out and out[-1] == ("other", ".")):
            out.append(tok)
            i += 1
            continue
        close = _closing(tokens, open_at)
        args = [_functions(a) for a in _split_args(tokens[open_at + 1:close])]
        i = close + 1
        if name in ("max", "min") and len(args) >= 2:
            out.append(("word", f"{'GREATEST' if name == 'max' else 'LEAST'}({', '.join(map(_text, args))})"))
        elif name in ("max", "min"):
            out.append(("word", f"{name}({_text(args[0])})"))
        elif name == "group_concat":
            sep = _text(args[1]) if len(args) > 1 else "','"
            out.append(("word", f"string_agg(({_text(args[0])})::text, {sep})"))
        elif name == "printf":
            fmt = _text(args[0]).replace("%%", "%")
            if fmt != "'%016x'" or len(args) != 2:
                raise ValueError(f"printf({fmt}, ...) has no PostgreSQL translation")
            out.append(("word", f"lpad(to_hex({_text(args[1])}), 16, '0')"))
        elif name == "json_extract":
            path = _text(args[1])
            if not (path.startswith("'$.") and path.endswith("'")):
                raise ValueError(f"json_extract path {path} has no PostgreSQL translation")
            keys = path[3:-1].split(".")
            out.append(("word", f"(({_text(args[0])})::jsonb #>> '{{{','.join(keys)}}}')"))
        else:  # json_each, in a FROM clause: take an alias that follows, or name it json_each
            j = _next_code(tokens, i)
            alias = "json_each"
            if j < len(tokens) and _word(tokens[j], "as"):
                k = _next_code(tokens, j + 1)
                alias, i = tokens[k][1], k + 1
            source = _text(args[0])
            if _is_placeholder(args[0]):
                out.append(("word", f"(SELECT e.value::bigint AS value FROM json_array_elements_text(({source})::json)"
                                    f" AS e (value)) AS {alias}"))
            else:
                out.append(("word", f"json_array_elements_text(({source})::json) AS {alias} (value)"))
    return out


def _insert_target(tokens: list[tuple[str, str]]) -> tuple[str | None, list[str]]:
    """(table, listed columns) of an INSERT statement."""
    code = [t for t in tokens if t[0] not in ("ws", "comment")]
    for n, tok in enumerate(code):
        if _word(tok, "into") and n + 1 < len(code):
            table = code[n + 1][1].strip('"').lower()
            cols: list[str] = []
            if n + 2 < len(code) and code[n + 2] == ("other", "("):
                for t in code[n + 3:]:
                    if t == ("other", ")"):
                        break
                    if t[0] in ("word", "ident"):
                        cols.append(t[1].strip('"').lower())
            return table, cols
    return None, []


def _qualify_update_set(tokens: list[tuple[str, str]], table: str, columns: tuple[str, ...]) -> list[tuple[str, str]]:
    """In ``ON CONFLICT … DO UPDATE SET a = expr, … [WHERE cond]``, qualify bare column names on the
    right-hand sides and in the condition with the table (SQLite reads them as the stored row)."""
    code_idx = [n for n, t in enumerate(tokens) if t[0] not in ("ws", "comment")]
    start = None
    for a, b, c in zip(code_idx, code_idx[1:], code_idx[2:], strict=False):
        if _word(tokens[a], "do") and _word(tokens[b], "update") and _word(tokens[c], "set"):
            start = c + 1
            break
    if start is None:
        return tokens
    out = tokens[:start]
    depth = 0
    lhs = True  # at an assignment's target
    cols = set(columns)
    for n in range(start, len(tokens)):
        tok = tokens[n]
        if tok == ("other", "("):
            depth += 1
        elif tok == ("other", ")"):
            depth -= 1
        if depth == 0 and tok == ("other", ","):
            lhs = True
        elif depth == 0 and (tok == ("other", "=") or _word(tok, "where", "returning")):
            lhs = False
        if tok[0] == "word" and not lhs and tok[1].lower() in cols:
            prev = next((t for t in reversed(out) if t[0] not in ("ws", "comment")), None)
            nxt = tokens[_next_code(tokens, n + 1)] if _next_code(tokens, n + 1) < len(tokens) else None
            if prev != ("other", ".") and nxt != ("other", "(") and nxt != ("other", "."):
                out.append(("word", f"{table}.{tok[1]}"))
                continue
        out.append(tok)
    return out


_CLAUSE_WORDS = frozenset({
    "where", "join", "left", "right", "inner", "outer", "cross", "full", "on", "group", "order", "limit",
    "union", "except", "intersect", "having", "window", "offset", "using", "natural", "returning",
})
_IS_OPERANDS = frozenset({"null", "true", "false", "distinct", "unknown"})


def _is_operators(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """SQLite's ``a IS b`` / ``a IS NOT b`` compare any values, NULL-safely: PostgreSQL spells that
    ``IS [NOT] DISTINCT FROM`` (its ``IS`` takes only NULL, TRUE, FALSE)."""
    out = list(tokens)
    for n, tok in enumerate(out):
        if not _word(tok, "is"):
            continue
        j = _next_code(out, n + 1)
        if j >= len(out) or (out[j][0] == "word" and out[j][1].lower() in _IS_OPERANDS):
            continue
        if _word(out[j], "not"):
            k = _next_code(out, j + 1)
            if k < len(out) and out[k][0] == "word" and out[k][1].lower() in _IS_OPERANDS:
                continue
            out[n], out[j] = ("word", "IS DISTINCT FROM"), ("ws", "")
        else:
            out[n] = ("word", "IS NOT DISTINCT FROM")
    return out


def _alias_subqueries(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Name every unnamed subquery in a FROM clause (SQLite allows them; PostgreSQL 15 does not)."""
    out = list(tokens)
    count = 0
    n = 0
    while n < len(out):
        if out[n] == ("other", "(") and n > 0:
            prev = next((t for t in reversed(out[:n]) if t[0] not in ("ws", "comment")), None)
            inner = _next_code(out, n + 1)
            if (prev is not None and (_word(prev, "from", "join") or prev == ("other", ","))
                    and inner < len(out) and _word(out[inner], "select")
                    and (prev != ("other", ",") or _in_from(out, n))):
                close = _closing(out, n)
                after = _next_code(out, close + 1)
                named = after < len(out) and (
                    _word(out[after], "as") or (out[after][0] in ("word", "ident")
                                                and out[after][1].lower() not in _CLAUSE_WORDS))
                if not named:
                    count += 1
                    out.insert(close + 1, ("word", f" AS kaos_subquery_{count}"))
        n += 1
    return out


def _in_from(tokens: list[tuple[str, str]], at: int) -> bool:
    """Whether position ``at`` sits in a FROM list (the nearest clause keyword before it is FROM)."""
    depth = 0
    for tok in reversed(tokens[:at]):
        if tok == ("other", ")"):
            depth += 1
        elif tok == ("other", "("):
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0 and _word(tok, "from"):
            return True
        elif depth == 0 and _word(tok, "select", "where", "set", "values", "on"):
            return False
    return False


def translate(sql: str, catalog: Catalog, *, many: bool = False) -> Translation:
    """The PostgreSQL form of one SQLite statement (see the module docstring for the rules)."""
    tokens = _tokens(sql)
    code = [t for t in tokens if t[0] not in ("ws", "comment")]
    verb = code[0][1].upper() if code else ""
    table: str | None = None
    # Placeholders first: every later rule sees psycopg's named form.
    count = 0
    renamed: list[tuple[str, str]] = []
    for kind, text in tokens:
        if kind == "q":
            count += 1
            renamed.append(("param", f"%(p{count})s"))
        elif kind == "qnum":
            renamed.append(("param", f"%(p{int(text[1:])})s"))
        elif kind == "named":
            renamed.append(("param", f"%({text[1:]})s"))
        elif kind == "word" and text.lower() == "rowid":
            renamed.append(("word", "id"))
        elif kind == "word" and text.lower() == "like":
            renamed.append(("word", "ILIKE"))
        else:
            renamed.append((kind, text.replace("%", "%%")))
    tokens = renamed
    # CAST(x AS REAL / INTEGER): SQLite's are 64-bit.
    for n, tok in enumerate(tokens):
        if _word(tok, "real", "integer"):
            prev = next((t for t in reversed(tokens[:n]) if t[0] not in ("ws", "comment")), None)
            if prev is not None and _word(prev, "as"):
                tokens[n] = ("word", "DOUBLE PRECISION" if tok[1].lower() == "real" else "BIGINT")
    conflict = ""
    if verb == "INSERT":
        idx = [n for n, t in enumerate(tokens) if t[0] not in ("ws", "comment")]
        if len(idx) > 2 and _word(tokens[idx[1]], "or"):
            action = tokens[idx[2]][1].upper()
            for n in (idx[1], idx[2]):
                tokens[n] = ("ws", "")
            table, cols = _insert_target(tokens)
            if action == "IGNORE":
                conflict = " ON CONFLICT DO NOTHING"
            elif action == "REPLACE":
                if table is None or table not in catalog.primary_key:
                    raise ValueError(f"INSERT OR REPLACE into {table}: no primary key known")
                key = catalog.primary_key[table]
                sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in cols if c not in key)
                conflict = f" ON CONFLICT ({', '.join(key)}) DO " + (f"UPDATE SET {sets}" if sets else "NOTHING")
            else:
                raise ValueError(f"INSERT OR {action} has no PostgreSQL translation")
        table, listed = _insert_target(tokens)
        explicit = table in catalog.identity and catalog.identity[table or ""] in listed
        if table in catalog.columns:
            tokens = _qualify_update_set(tokens, table, catalog.columns[table])
    else:
        explicit = False
    if verb in ("UPDATE", "DELETE"):
        k = 1 if verb == "UPDATE" else 2  # UPDATE t …, DELETE FROM t …
        if len(code) > k:
            table = code[k][1].strip('"').lower()
    tokens = _alias_subqueries(_is_operators(_functions(tokens)))
    text = "".join(t[1] for t in tokens).rstrip().rstrip(";")
    has_returning = any(_word(t, "returning") for t in tokens)
    if conflict:
        text += conflict
    returning = None
    if verb == "INSERT" and not many and not has_returning:
        if table in catalog.identity and not explicit:
            returning = catalog.identity[table]
        elif table in catalog.rowid:
            returning = catalog.rowid[table]
        if returning is not None:
            text += f" RETURNING {returning}"
    matches: list[FullTextMatch] = []

    def fulltext(m: re.Match[str]) -> str:
        slot = f"kaos_fts_{len(matches)}_"
        kind = "skill" if m.group("kind").lower() == "skills" else "memory"
        matches.append(FullTextMatch(kind, m.group("match"), m.group("limit"), bool(m.group("live")), slot))
        return ranking_sql(kind, slot, limit=m.group("limit"), live_only=bool(m.group("live")))

    text = _FTS.sub(fulltext, text)
    limits = tuple(dict.fromkeys(re.findall(r"\bLIMIT\s+%\((\w+)\)s", text, re.I)))
    return Translation(text, returning, table, verb, tuple(matches), explicit, limits)
