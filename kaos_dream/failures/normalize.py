"""Normalising error messages so the same failure always gets the same fingerprint.

The algorithm is versioned (:data:`ALGORITHM`): the version is part of every fingerprint hash and is
stored with it, so changing the rules makes new fingerprints instead of silently regrouping old ones.

Rules: keep the first two non-empty lines (the frame a tool draws around a
diagnostic, Terraform's ``╷ │ ╵``, is not part of a line), then replace, in this order, emails, URLs,
hosts, IPs and ports, UUIDs/ULIDs, hashes/hex/opaque ids (and Kubernetes pod suffixes), dates and
times, durations and sizes, file paths (also when a name holds a date or id replaced before, and with
their query strings), numbers (also when glued to a unit, ``7kg`` and ``1024px``, and ordinals,
``3rd``) and quoted values after ``=``. (Dates are matched just before hex runs, so a
fractional second is never taken for a hash.) HTTP status codes, ``errno`` values and exit codes are kept:
they tell failures apart. A Python traceback is reduced to its exception line plus the function of
its last frame (line numbers and file paths do not count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# 2: numbers glued to a unit ("7kg", "1024px") or ordinals ("3rd") normalise like other numbers
# 3: the frame of a boxed diagnostic (Terraform's ``╷ │ ╵``) is not a line; a path whose name holds a date,
#    id or hash is still one path (``/backups/db-2026-11-30.dump``), and so is its query string
ALGORITHM = 3

_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):\s*$", re.MULTILINE)
_FRAME = re.compile(r'^\s*File "[^"]*", line \d+, in (?P<func>[^\s]+)', re.MULTILINE)
_EXC_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Fault|Failure|Timeout"
    r"|Refused|Reset|NotFound|Denied|Iteration))(?:\s*:\s*(?P<msg>.*))?$"
)
_LEADING_TYPE = re.compile(
    r"^\s*(?:Uncaught\s+|raise\s+)?(?P<type>[A-Za-z_][\w.]*"
    r"(?:Error|Exception|Exit|Interrupt|Fault|Failure|Warning))(?:\s*\[[A-Z_0-9]+\])?\s*(?::|$|\(|\s-\s)"
)

_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{0,15}://[^\s'\"<>)\]]+", re.IGNORECASE)
_TLDS = (
    "com|net|org|io|ai|dev|app|co|cloud|internal|local|localdomain|svc|lan|corp|example|test|invalid|edu|gov"
    "|us|uk|de|fr|sh|xyz|me|tech|run|info|biz|cluster"
)
_HOST = re.compile(rf"\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:{_TLDS})\b(?::\d{{1,5}})?", re.IGNORECASE)
_LOCALHOST = re.compile(r"\blocalhost(?::\d{1,5})?\b", re.IGNORECASE)
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b")
_IPV6 = re.compile(
    r"\[?(?:\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b"
    r"|(?<![\w:])(?:[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4}:){0,5}"
    r"(?:[0-9a-f]{1,4}\b)?"
    r"|::1\b)\]?(?::\d{1,5})?",
    re.IGNORECASE,
)
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_ULID = re.compile(r"\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b")
_HEX = re.compile(
    r"\b(?:0x[0-9a-f]+|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}"
    r"|[0-9a-f]{2,8}(?::[0-9a-f]{2,8}){3,})\b",
    re.IGNORECASE,
)
_POD = re.compile(r"\b([a-z0-9][a-z0-9-]*?)-(?:[a-f0-9]{6,10}-)?[bcdfghjklmnpqrstvwxz2-9]{5}\b")
_OPAQUE = re.compile(r"\b(?=[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{12,}\b")
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
_DATES = (
    re.compile(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}| ?UTC)?", re.IGNORECASE
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
_SIZE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes?|B)\b")
_WIN_PATH = re.compile(r"\b[A-Za-z]:\\[^\s'\"]*|\\\\[\w.$-]+\\[^\s'\"]*")
# A path's segments may hold what was replaced before (``/backups/db-<date>.dump``): still one path.
_SEGMENT = r"(?:[\w.@+%=-]|<(?:date|hex|uuid|id|pod|ip|host)>)+"
# A query string after a path is values (``/v1/events?since=<date>``): part of the path.
_QUERY = r"(?:\?[^\s'\"()<>]*(?:<\w+>[^\s'\"()<>]*)*)?"
_POSIX_PATH = re.compile(rf"(?<![\w.:/<>-])(?:~|\.{{1,2}})?(?:/{_SEGMENT})+/?{_QUERY}")
_REL_PATH = re.compile(r"(?<![\w/<>-])(?:(?:[\w.-]|<(?:date|hex|uuid|id)>)+/)+(?:[\w.-]|<(?:date|hex|uuid|id)>)+"
                       r"\.[A-Za-z]{1,6}\b")
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
_UNIT_NUMBER = re.compile(
    r"(?<![\w.<])[-+]?\d+(?:[.,]\d+)*(?=(?:kg|mg|g|lbs?|oz|km|cm|mm|mi|ft|px|pt|em|rem|vh|vw|dpi|k|x|hz|khz|mhz"
    r"|ghz|rpm|pcs|items?|rows?|cols?|chars?|tokens?|req|rps|qps|cpus?|cores?)\b)",
    re.IGNORECASE,
)
_ORDINAL = re.compile(r"(?<![\w.<])\d+(?:st|nd|rd|th)\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w<])[-+]?\d+(?:[.,]\d+)*(?![\w>])")
_ASSIGNED = re.compile(r"""=\s*(?:'[^']*'|"[^"]*")""")
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


def first_lines(message: str, count: int = 2) -> list[str]:
    lines = (_BOX_FRAME.sub("", line).strip() for line in message.splitlines())
    return [line for line in lines if line][:count]


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


def scrub(text: str) -> str:
    """Apply the replacement rules, in the documented order, to one piece of text."""
    kept: list[str] = []
    text = text.replace("\ue000", " ")  # the marker of protected tokens below can never come from the input

    def keep(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return "\ue000" + chr(0xE100 + len(kept) - 1) + "\ue000"

    text = _EMAIL.sub("<email>", text)
    text = _URL.sub("<url>", text)
    text = _HOST.sub("<host>", text)
    text = _LOCALHOST.sub("<host>", text)
    text = _IPV4.sub("<ip>", text)
    text = _IPV6.sub("<ip>", text)
    text = _UUID.sub("<uuid>", text)
    text = _ULID.sub("<uuid>", text)
    for pattern in _DATES:
        text = pattern.sub("<date>", text)
    text = _POD.sub(lambda m: m.group(1) + "-<pod>", text)
    text = _HEX.sub("<hex>", text)
    text = _OPAQUE.sub("<id>", text)
    text = _KEEP.sub(keep, text)
    text = _DURATION.sub("<dur>", text)
    text = _SIZE.sub("<size>", text)
    text = _WIN_PATH.sub("<path>", text)
    text = _POSIX_PATH.sub("<path>", text)
    text = _REL_PATH.sub("<path>", text)
    text = _UNIT_NUMBER.sub("<n>", text)
    text = _ORDINAL.sub("<nth>", text)
    text = _NUMBER.sub("<n>", text)
    text = _ASSIGNED.sub("=<v>", text)
    text = re.sub("\ue000(.)\ue000", lambda m: kept[ord(m.group(1)) - 0xE100], text)
    if re.search(r"\[(?:errno|winerror) -?\d+\]", text, re.IGNORECASE):
        text = _TRAILING_PATH.sub("", text)
    return _SPACES.sub(" ", text).strip().rstrip(".!;,").lower()


def normalize(message: str) -> Normalized:
    """Reduce ``message`` to the text its fingerprint is computed from."""
    tb = _traceback_parts(message)
    if tb is not None:
        exc_line, func, exc_type = tb
        text = scrub(exc_line) + (f" @ {func}" if func else "")
        return Normalized(exc_type or None, text, exc_line)
    lines = first_lines(message)
    key = "\n".join(lines)
    found = _LEADING_TYPE.match(lines[0]) if lines else None
    exc_type = found.group("type") if found else None
    return Normalized(exc_type, " | ".join(scrub(line) for line in lines), key)
