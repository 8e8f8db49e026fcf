"""Normalising error messages so the same failure always gets the same fingerprint.

The algorithm is versioned (:data:`ALGORITHM`): the version is part of every fingerprint hash and is
stored with it, so changing the rules makes new fingerprints instead of silently regrouping old ones.

Input is bounded first (:func:`bounded`, MAX_LINE_CHARS) and the patterns that used to backtrack run on
RE2, so the cost is linear in the message whatever it holds (issue 34). Each step is named in :data:`STEPS`.

Rules: keep the first two non-empty lines (the frame a tool draws around a diagnostic, Terraform's
``╷ │ ╵``, is not part of a line), then replace, in this order, the name of a volatile thing after the
word that says what it is (container, image, model, pod, thread, runner, user, namespace, index), ARNs,
pinned build labels, emails, URLs, hosts, IPs and ports (all ``<host>``), UUIDs/ULIDs, hashes/hex/opaque
ids (and Kubernetes pod suffixes), dates and times (with a zone's name), durations and sizes, file paths
(also when a name holds a date or id replaced before, and with their query strings), numbers (also when
glued to a unit, ``7kg`` and ``1024px``, and ordinals, ``3rd``) and quoted values after ``=``. (Dates
are matched just before hex runs, so a fractional second is never taken for a hash.) HTTP status codes,
``errno`` values and exit codes are kept: they tell failures apart. A Python traceback is reduced to its
exception line plus the function of its last frame (line numbers and file paths do not count).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import re2  # google-re2: automata, no backtracking, so a crafted message costs time linear in its length

# 2: numbers glued to a unit ("7kg", "1024px") or ordinals ("3rd") normalise like other numbers
# 3: the frame of a boxed diagnostic (Terraform's ``╷ │ ╵``) is not a line; a path whose name holds a date,
#    id or hash is still one path (``/backups/db-2026-11-30.dump``), and so is its query string
# 4: bounded input (the head and tail of a huge message, each key line cut at MAX_LINE_CHARS) and
#    patterns without backtracking (issue 34)
# 5: classes of volatile parts real tools print: severity labels, bracketed targets, the kernel's kB,
#    candidate-version and scheduler-reason lists, log headers, bus addresses, process indexes and names,
#    resource names, git pathspecs, short image names, files given to a flag, a transfer tool's prefix, a
#    URL's label, a make recipe's location; key lines pass over lines that say nothing (issue 34, round 2)
ALGORITHM = 5

# What normalisation reads of a message: its first MAX_HEAD_CHARS and last MAX_TAIL_CHARS (a traceback's
# exception line is at the end), and of each key line its first MAX_LINE_CHARS. Everything after this bound
# runs on at most that much text, so a megabyte costs what its head and tail cost.
MAX_HEAD_CHARS = 48 * 1024
MAX_TAIL_CHARS = 16 * 1024
MAX_LINE_CHARS = 1000
# Python's \w is Unicode-aware; RE2's is ASCII. The RE2 patterns spell the Unicode class out.
_W = r"[\pL\pN_]"

_TRACEBACK = re.compile(r"^[ \t]*Traceback \(most recent call last\):\s*$", re.MULTILINE)
_FRAME = re.compile(r'^[ \t]*File "[^"]*", line \d+, in (?P<func>[^\s]+)', re.MULTILINE)
_EXC_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Fault|Failure|Timeout"
    r"|Refused|Reset|NotFound|Denied|Iteration))(?:\s*:\s*(?P<msg>.*))?$"
)
_LEADING_TYPE = re.compile(
    r"^\s*(?:Uncaught\s+|raise\s+)?(?P<type>[A-Za-z_][\w.]*"
    r"(?:Error|Exception|Exit|Interrupt|Fault|Failure|Warning))(?:\s*\[[A-Z_0-9]+\])?\s*(?::|$|\(|\s-\s)"
)

_EMAIL = re2.compile(rf"\b(?:{_W}|[.+-])+@(?:{_W}|-)+(?:\.(?:{_W}|-)+)+\b")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{0,15}://[^\s'\"<>)\]]+", re.IGNORECASE)
_TLDS = (
    "com|net|org|io|ai|dev|app|co|cloud|internal|local|localdomain|svc|lan|corp|example|test|invalid|edu|gov"
    "|us|uk|de|fr|sh|xyz|me|tech|run|info|biz|cluster"
)
_HOST = re2.compile(rf"(?i)\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:{_TLDS})\b(?::\d{{1,5}})?")
_LOCALHOST = re.compile(r"\blocalhost(?::\d{1,5})?\b", re.IGNORECASE)
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b")
_IPV6 = re.compile(
    r"\[?(?:\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b"
    r"|(?<![\w:])(?:[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4}:){0,5}"
    r"(?:[0-9a-f]{1,4}\b)?"
    r"|::1\b)\]?(?::\d{1,5})?",
    re.IGNORECASE,
)
# The name of a volatile thing (a container, image, model, pod, thread, runner, user, namespace, index,
# a resource on which permission was denied, a git pathspec) after the word that says what it is: quoted,
# bracketed, or one token holding a digit or punctuation (``runner: gpu-runner-03``,
# ``model "qwen2.5-coder:14b"``). A package, column, table or operation is not volatile: it says which
# failure this is (issue 34), so it is never in this list.
_NAMED = re2.compile(
    r"(?i)\b(container name|container|model|image|pods?|thread|runner:|user|namespace|index|resource"
    r"|pathspec|short-name|manifest for|pull access denied for)(\s+)"
    r"(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|\[[^\]\n]{1,200}\]"
    r"|[^\s\"'`\[,;]*[-_.:/0-9][^\s\"'`,;]*)"
)
_ARN = re2.compile(r"\barn:[A-Za-z0-9-]+:[A-Za-z0-9-]*:[A-Za-z0-9-]*:[0-9]*:[^\s\"',]+")
# A version's build or local label (``torch==2.3.1+cu121``) after a pin: a value like the version itself.
_PINNED = re.compile(r"(?<=[=@])v?\d+(?:\.\d+)*[+-][A-Za-z0-9.]+(?![\w.])")
# Every address of every interface, as servers print it: ``[::]:443``, ``:::3000``.
_ANY_V6 = re.compile(r"(?<![\w:])(?:\[::\]|::)(?::\d{1,5})?(?![\w:])")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_ULID = re.compile(r"\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b")
_HEX = re.compile(
    r"\b(?:0x[0-9a-f]+|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}"
    r"|[0-9a-f]{2,8}(?::[0-9a-f]{2,8}){3,})\b",
    re.IGNORECASE,
)
_POD = re2.compile(r"\b([a-z0-9][a-z0-9-]*?)-(?:[a-f0-9]{6,10}-)?[bcdfghjklmnpqrstvwxz2-9]{5}\b")
# A run of 12+ id characters with two digits and a letter (the test is in _opaque, RE2 has no lookahead)
_OPAQUE = re2.compile(r"\b[A-Za-z0-9_-]{12,}\b")
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
_DATES = (
    re.compile(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
        r"(?:Z|[+-]\d{2}:?\d{2}| ?UTC| (?-i:[A-Z]{2,4}T|MSK)\b)?",  # a zone's name is part of the time
        re.IGNORECASE
    ),
    re.compile(
        rf"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? \d{{1,2}} (?:{_MONTHS}) \d{{4}} \d{{2}}:\d{{2}}:\d{{2}}"
        r"(?: ?(?:GMT|UTC|[+-]\d{4}))?",
        re.IGNORECASE,
    ),
    re.compile(rf"\b(?:{_MONTHS}) +\d{{1,2}},? (?:\d{{4}} )?\d{{2}}:\d{{2}}:\d{{2}}", re.IGNORECASE),
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{4}/\d{2}/\d{2}\b"),
    re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"),
)
_DURATION = re.compile(
    r"\b(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?s\b|\b\d+(?:\.\d+)?\s?(?:ms|msec|µs|us|ns|s|sec|secs|seconds?"
    r"|m|mins?|minutes?|h|hrs?|hours?)\b",
    re.IGNORECASE,
)
_SIZE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|kB|bytes?|B)\b")  # the kernel writes kB
_WIN_PATH = re.compile(r"\b[A-Za-z]:\\[^\s'\"]*|\\\\[\w.$-]+\\[^\s'\"]*")
# A path's segments may hold what was replaced before (``/backups/db-<date>.dump``): still one path.
_SEGMENT = r"(?:[\w.@+%=-]|<(?:date|hex|uuid|id|pod|ip|host)>)+"
# A query string after a path is values (``/v1/events?since=<date>``): part of the path.
_QUERY = r"(?:\?[^\s'\"()<>]*(?:<\w+>[^\s'\"()<>]*)*)?"
_POSIX_PATH = re.compile(rf"(?<![\w.:/<>-])(?:~|\.{{1,2}})?(?:/{_SEGMENT})+/?{_QUERY}")
# Group 1 stands in for a look-behind (RE2 has none): the start of the text or a character no path continues.
_REL_PART = rf"(?:{_W}|[.-]|<(?:date|hex|uuid|id)>)+"
_REL_PATH = re2.compile(rf"(^|[^\pL\pN_/<>-])((?:{_REL_PART}/)+{_REL_PART}\.[A-Za-z]{{1,6}}\b)")
_KEEP = re.compile(
    r"\b(?:(?:HTTP|status|code|errno|error|response|returned|got|exit status|exit code|exited with)"
    r"[\s:=/]*(?:code\s*)?)(\d{1,3})\b"
    r"|\b[1-5]\d\d(?= (?:OK|Created|Accepted|Moved|Found|See|Not|Bad|Unauthori[sz]ed|Payment|Forbidden|Method"
    r"|Request|Conflict|Gone|Precondition|Unprocessable|Too|Internal|Service|Gateway|Unavailable"
    r"|Temporary|Permanent|Proxy|Unsupported|Misdirected|Locked|Upgrade)\b)",
    re.IGNORECASE,
)
# A number glued to a unit or ordinal suffix is a value like any other ('7kg' and '9kg' are one failure);
# the unit stays, so "7kg" and "7px" still differ. Sizes and durations were replaced before this.
# Group 1 stands in for a look-behind, group 3 (the unit, put back) for a look-ahead: RE2 has neither.
_UNIT_NUMBER = re2.compile(
    r"(?i)(^|[^\pL\pN_.<])[-+]?\d+(?:[.,]\d+)*((?:kg|mg|g|lbs?|oz|km|cm|mm|mi|ft|px|pt|em|rem|vh|vw|dpi|k|x|hz"
    r"|khz|mhz|ghz|rpm|pcs|items?|rows?|cols?|chars?|tokens?|req|rps|qps|cpus?|cores?)\b)"
)
_ORDINAL = re.compile(r"(?<![\w.<])\d+(?:st|nd|rd|th)\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w<])[-+]?\d+(?:[.,]\d+)*(?![\w>])")
_ASSIGNED = re.compile(r"""=\s*(?:'[^']*'|"[^"]*")""")
# Issue 34, round 2: classes of volatile parts real tools print (ALGORITHM 5). Each is a shape, not a message.
# A leading severity label a tool or client prints its own way: ``(error) X``, ``[ERROR] X``, ``ERROR: X``.
_SEVERITY = re.compile(r"^\s*(?:\((?:error|err)\)|\[(?:error|err)\]|(?:error|err)\s*:)\s*", re.IGNORECASE)
# The host or target a run reports on, in brackets after its status (Ansible's ``fatal: [web-03]: FAILED!``).
_BRACKETED_TARGET = re2.compile(r"(?i)^(fatal|failed|ok|changed|skipping|unreachable): \[[^\]\n]{1,200}\]")
# A glog-style line header's severity letter and month-day (``E1130 08:01:02.1 5512 raft.cc:77]``).
_GLOG = re.compile(r"\b([IWEF])\d{4}(?= \d{2}:\d{2}:\d{2})")
# A list of the versions an index has: which ones it lists changes by the day ("none" is another failure).
_VERSION_LIST = re2.compile(r"(?i)\(from versions: ([^)\n]*)\)")
# A bus address (PCI ``0000:3b:00.0``): which slot a device sits in.
_BUS_ADDRESS = re2.compile(r"(?i)\b[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}(?:\.[0-7])?\b")
# An index glued to a word naming a process, worker or device (``[rank3]``, ``worker12``, ``gpu0``).
_PROCESS_INDEX = re2.compile(r"(?i)\b(rank|worker|gpu|cuda|replica|shard|device|proc|tid|pid)\d+\b")
# The reasons a scheduler lists after "N/M nodes are available:": their kinds are the failure, while the
# counts, their order, which resource ran short and which taint a node had are volatile (:func:`_reasons`).
_REASON_LIST = re2.compile(r"(?i)\b(are available:)([^.\n]*)")
# What preemption could not do follows the reasons; it restates that nothing fits.
_PREEMPTION = re2.compile(r"(?i)\.?\s*preemption: .*$")
_REASON_COUNT = re2.compile(r"^\d+\s+")
_REASON_VALUE = re2.compile(r"(?i)(\binsufficient)\s+\S+|\{[^{}]*\}")
# A transfer tool's prefix naming what it moved (``upload failed: <path> to <url>``) before the error itself.
_TRANSFER = re2.compile(r"(?i)^(?:upload|download|copy|move|delete) failed: <(?:path|url)>(?: to <(?:path|url)>)?:?\s*")
# A file given to a flag (``-r requirements.txt``): a path even without a slash.
_FLAG_FILE = re2.compile(r"(^|\s)(-[rcf]|--requirement|--constraint|--file|--config)\s+[\w.~/-]*[./][\w.~/-]*")
# The label of a URL in parentheses after it (``in central (<url>)``): which mirror, not which failure.
_URL_LABEL = re2.compile(r"(^|[^\w.<>-])[\w.-]+ \(<url>\)")
# A make recipe's location and target (``[Makefile:12: test]``): where it failed, like a file and line.
_MAKE_TARGET = re2.compile(r"\[[^\]\s:]+:<n>: [^\]\n]+\]")
# The name of the process holding something, after its pid (``process <n> (dnf)``, ``pid=<n>, name=java``).
_PROCESS_NAME = re2.compile(r"(?i)\b(process|pid)(\s*[=:]?\s*)<n>(,?\s*)(?:\([^()\n]{1,64}\)|(?:name|comm)=[^\s,;]+)")
_SPACES = re.compile(r"\s+")
# An OS error names the file it failed on ("[Errno 28] No space left on device: '/x'"): the file is an
# identifier, not part of what went wrong, so a trailing path is dropped after paths are replaced.
_TRAILING_PATH = re.compile(r"""(?:(?<=\])|(?<=\w)):\s*['"]?<path>['"]?\s*$""")


@dataclass(frozen=True)
class Normalized:
    """What a message contributes to its fingerprint."""

    exception_type: str | None
    text: str  # the normalised key text
    key_lines: str  # the raw lines the key was built from (what diagnosers read first)


# The frame some tools draw around a diagnostic (Terraform: a line of "╷", each line opened by "│", a
# closing "╵"): drawing, not words, so the key lines are the diagnostic's own lines.
_BOX_FRAME = re.compile(r"^\s*[╷╵│┃]+")


def bounded(message: str) -> str:
    """The part of ``message`` normalisation reads: all of it up to MAX_HEAD_CHARS + MAX_TAIL_CHARS,
    else its head and its tail (where a traceback ends), joined by a line break."""
    if len(message) <= MAX_HEAD_CHARS + MAX_TAIL_CHARS:
        return message
    return message[:MAX_HEAD_CHARS] + "\n" + message[-MAX_TAIL_CHARS:]


# Lines that say nothing of the failure: a bare severity label (npm's ``npm ERR!`` spacer), a package
# manager's progress step (``[1/4] Resolving packages...``) or its banner (``yarn install v1.22.22``).
_CONTENT_FREE = re2.compile(
    r"^(?:(?:[\w.-]+\s+)?(?:ERR!|ERROR|error|err|fatal|warn|WARN|warning)[!:]?"
    r"|\[\d+/\d+\]\s.*|[\w.-]+ [\w.-]+ v\d+(?:\.\d+)+)$"
)


# Where a line of text starts (its first non-space character) and where a line ends (the breaks str.splitlines
# knows). Lines are found by jumping from text to text, so a run of blank lines costs one search, not a line each.
_TEXT_START = re.compile(r"\S")
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
MAX_LINES_READ = 64  # lines holding text that first_lines reads before it settles for what it has


def _text_lines(message: str) -> Iterator[str]:
    """The lines of ``message`` that hold text, leading space dropped, each cut at MAX_LINE_CHARS + 8."""
    pos = 0
    for _ in range(MAX_LINES_READ):
        start = _TEXT_START.search(message, pos)
        if start is None:
            return
        end = _LINE_BREAK.search(message, start.start())
        stop = end.start() if end else len(message)
        yield message[start.start() : min(stop, start.start() + MAX_LINE_CHARS + 8)]
        pos = stop + 1


def first_lines(message: str, count: int = 2) -> list[str]:
    """The first ``count`` non-empty lines that say something (:data:`_CONTENT_FREE` lines are passed
    over unless nothing else is left), drawing frames stripped, each cut at MAX_LINE_CHARS."""
    lines = (_BOX_FRAME.sub("", line).strip()[:MAX_LINE_CHARS] for line in _text_lines(message))
    kept: list[str] = []
    spare: list[str] = []
    for line in lines:
        if not line:
            continue
        if _CONTENT_FREE.match(line):
            spare.append(line)
            continue
        kept.append(line)
        if len(kept) == count:
            break
    return kept or spare[:count]


def _traceback_parts(message: str) -> tuple[str, str | None, str] | None:
    """(exception line, last frame's function, exception type) of a Python traceback, or None."""
    match = _TRACEBACK.search(message)
    if not match:
        return None
    tail = message[match.end() :]
    frames = _FRAME.findall(tail)
    exc_line = ""
    exc_type = ""
    for line in tail.splitlines():
        stripped = line.strip()
        if not stripped or line[:1].isspace():
            continue
        found = _EXC_LINE.match(stripped)
        if found:
            exc_line, exc_type = stripped, found.group("type")
    if not exc_line:
        lines = [ln.strip() for ln in tail.splitlines() if ln.strip() and not ln[:1].isspace()]
        if not lines:
            return None
        exc_line = lines[-1]
        exc_type = exc_line.split(":", 1)[0].strip()
    return exc_line, (frames[-1] if frames else None), exc_type


def _reasons(match: re2._Match) -> str:
    """A scheduler's reasons as the sorted set of their kinds (``insufficient <resource>``, ...)."""
    kinds = set()
    for item in match.group(2).split(","):
        item = _REASON_COUNT.sub("", item.strip())
        kinds.add(_REASON_VALUE.sub(lambda m: m.group(1) + " <resource>" if m.group(1) else "{}", item))
    # every cluster taints its control-plane nodes: beside another reason, a taint says which nodes were
    # never candidates, not why the pod did not fit
    untainted = {kind for kind in kinds if "taint" not in kind}
    return match.group(1) + " " + ", ".join(sorted(untainted or kinds))


def _opaque(match: re2._Match) -> str:
    """An opaque id holds two digits and a letter; a long word or number alone is not one."""
    token = match.group(0)
    digits = sum(ch.isdigit() for ch in token)
    return "<id>" if digits >= 2 and any(ch.isalpha() for ch in token) else token


_DATE_STEPS = tuple((f"date {i + 1}", pattern, "<date>") for i, pattern in enumerate(_DATES))
# The replacement steps in their documented order: (name shown by `kaos failure explain`, pattern, replacement).
# The step named "kept codes" protects HTTP/errno/exit codes from the number steps; they come back at the end.
STEPS: tuple[tuple[str, Any, Any], ...] = (
    ("severity prefix", _SEVERITY, "error: "),
    ("version list", _VERSION_LIST, lambda m: m.group(0) if m.group(1).strip().lower() == "none"
     else "(from versions: <list>)"),
    ("bracketed target", _BRACKETED_TARGET, lambda m: m.group(1) + ": [<target>]"),
    ("volatile name", _NAMED, lambda m: m.group(1) + m.group(2) + "<name>"),
    ("arn", _ARN, "<arn>"),
    ("pinned version label", _PINNED, "<n>"),
    ("email", _EMAIL, "<email>"),
    ("url", _URL, "<url>"),
    ("host", _HOST, "<host>"),
    ("localhost", _LOCALHOST, "<host>"),
    ("ipv4", _IPV4, "<host>"),  # an address is a host: `10.0.4.12` and `build-02.example.com` alike
    ("ipv6", _IPV6, "<host>"),
    ("any-address ipv6", _ANY_V6, "<host>"),
    ("preemption note", _PREEMPTION, ""),
    ("reason list", _REASON_LIST, _reasons),
    ("uuid", _UUID, "<uuid>"),
    ("ulid", _ULID, "<uuid>"),
    ("log header", _GLOG, lambda m: m.group(1) + "<mmdd>"),
    *_DATE_STEPS,
    ("bus address", _BUS_ADDRESS, "<addr>"),
    ("pod suffix", _POD, lambda m: m.group(1) + "-<pod>"),
    ("hex", _HEX, "<hex>"),
    ("opaque id", _OPAQUE, _opaque),
    ("kept codes", _KEEP, None),
    ("duration", _DURATION, "<dur>"),
    ("size", _SIZE, "<size>"),
    ("windows path", _WIN_PATH, "<path>"),
    ("posix path", _POSIX_PATH, "<path>"),
    ("relative path", _REL_PATH, lambda m: m.group(1) + "<path>"),
    ("file given to a flag", _FLAG_FILE, lambda m: m.group(1) + m.group(2) + " <path>"),
    ("transfer prefix", _TRANSFER, ""),
    ("label of a url", _URL_LABEL, lambda m: m.group(1) + "<label> (<url>)"),
    ("process index", _PROCESS_INDEX, lambda m: m.group(1) + "<n>"),
    ("number with unit", _UNIT_NUMBER, lambda m: m.group(1) + "<n>" + m.group(2)),
    ("ordinal", _ORDINAL, "<nth>"),
    ("number", _NUMBER, "<n>"),
    ("make target", _MAKE_TARGET, "[<recipe>]"),
    ("process name", _PROCESS_NAME, lambda m: m.group(1) + m.group(2) + "<n>" + m.group(3) + "<proc>"),
    ("assigned quoted value", _ASSIGNED, "=<v>"),
)


def scrub(text: str, trace: list[tuple[str, str]] | None = None) -> str:
    """Apply the replacement rules, in the documented order, to one piece of text. With ``trace``, each
    step that changed the text appends (step name, text after it)."""
    kept: list[str] = []
    text = text.replace("\ue000", " ")  # the marker of protected tokens below can never come from the input

    def keep(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return "\ue000" + chr(0xE100 + len(kept) - 1) + "\ue000"

    for name, pattern, replacement in STEPS:
        after = pattern.sub(keep if replacement is None else replacement, text)
        if trace is not None and after != text:
            trace.append((name, re.sub("\ue000(.)\ue000", lambda m: kept[ord(m.group(1)) - 0xE100], after)))
        text = after
    text = re.sub("\ue000(.)\ue000", lambda m: kept[ord(m.group(1)) - 0xE100], text)
    if re.search(r"\[(?:errno|winerror) -?\d+\]", text, re.IGNORECASE):
        after = _TRAILING_PATH.sub("", text)
        if trace is not None and after != text:
            trace.append(("trailing path after an OS error", after))
        text = after
    return _SPACES.sub(" ", text).strip().rstrip(".!;,").lower()


def normalize(message: str) -> Normalized:
    """Reduce ``message`` to the text its fingerprint is computed from."""
    message = bounded(message)
    tb = _traceback_parts(message)
    if tb is not None:
        exc_line, func, exc_type = tb
        exc_line = exc_line[:MAX_LINE_CHARS]
        text = scrub(exc_line) + (f" @ {func}" if func else "")
        return Normalized(exc_type or None, text, exc_line)
    lines = first_lines(message)
    key = "\n".join(lines)
    found = _LEADING_TYPE.match(lines[0]) if lines else None
    exc_type = found.group("type") if found else None
    return Normalized(exc_type, " | ".join(scrub(line) for line in lines), key)
