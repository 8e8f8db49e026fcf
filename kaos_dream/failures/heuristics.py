"""The built-in heuristic diagnosers: word-boundary patterns, in a tested order.

Order matters because real messages nest causes: ``ConnectionError(... NameResolutionError ...)`` is a
DNS failure, ``SSLError(... Max retries exceeded ...)`` is a certificate problem, and an OpenAI 429
that says ``insufficient_quota`` is a billing problem, not a rate limit. So the specific rules run
first and the broad ones (any timeout, any 5xx, any Python exception type) last.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .diagnosis import REGISTRY, Diagnosis, FailureInput


@dataclass(frozen=True)
class PatternDiagnoser:
    """Answers when any pattern matches the failure's key text (case-insensitive)."""

    name: str
    category: str
    root_cause: str
    suggested_action: str
    confidence: float
    patterns: tuple[str, ...]

    @functools.cached_property
    def _regex(self) -> re.Pattern[str]:
        """Compiled on first use, not at import: every `kaos` call imports the built-ins."""
        return re.compile("|".join(f"(?:{p})" for p in self.patterns), re.IGNORECASE | re.MULTILINE)

    def __call__(self, failure: FailureInput) -> Diagnosis | None:
        if self._regex.search(failure.text):
            return Diagnosis(
                self.category, self.root_cause, self.suggested_action, self.confidence, "heuristic", self.name
            )
        return None


BUILTINS: tuple[PatternDiagnoser, ...] = (
    PatternDiagnoser(
        "billing",
        "config",
        "The account has no credit or quota left with the provider.",
        "Top up credits or raise the plan's quota, then retry; retrying before that cannot succeed.",
        0.9,
        (
            r"\bcredit balance\b",
            r"\binsufficient[_ ]quota\b",
            r"\bexceeded your current quota\b",
            r"\bbilling (?:details|hard limit)\b",
            r"\b402\b",
            r"\bpayment required\b",
        ),
    ),
    PatternDiagnoser(
        "rate_limit",
        "transient",
        "The service is rate limiting or throttling requests.",
        "Back off exponentially (honour Retry-After) and lower concurrency before retrying.",
        0.9,
        (
            r"\b429\b",
            r"\btoo many requests\b",
            r"\brate[ -]?limit(?:ed|ing|s)?\b",
            r"\brate_limit_exceeded\b",
            r"\bthrottl(?:ed|ing|e)\w*",
            r"\bThrottlingException\b",
            r"\(SlowDown\)",
            r"\breduce your request rate\b",
            r"\brate exceeded\b",
            r"\bRESOURCE_EXHAUSTED\b",
            r"\brequest limit exceeded\b",
        ),
    ),
    PatternDiagnoser(
        "auth",
        "config",
        "The credentials were rejected, missing or expired.",
        "Check the API key / token / SSH key and its scopes for this environment, then retry.",
        0.85,
        (
            r"\b401\b",
            r"\bunauthori[sz]ed\b",
            r"\bauthentication[_ ](?:error|failed|required)\b",
            r"\b(?:Client)?AuthenticationError\b",
            r"\binvalid[ _-](?:api[ _-]?key|x-api-key|token|credentials?)\b",
            r"\bapi[ _-]?key (?:is )?(?:invalid|missing|not valid|expired)\b",
            r"\bExpiredToken\b",
            r"\btoken (?:has )?expired\b",
            r"\bno valid credential",
            r"\bfailed to retrieve a token\b",
            r"\bpermission denied \(publickey",
            r"\binvalid_grant\b",
            r"\b403\b",
            r"\bforbidden\b",
            r"\baccess denied\b",
            r"\bAccessDenied\b",
            r"\bdenied to\b",
            r"\bdoes not have [\w.]+ access\b",
            r"\bpermission '[^']+' denied\b",
            r"\bnot authori[sz]ed to perform\b",
        ),
    ),
    PatternDiagnoser(
        "tls",
        "config",
        "The TLS handshake failed: the certificate is untrusted, expired or for another host.",
        "Install the right CA bundle or certificate (or fix the hostname); never disable verification.",
        0.85,
        (
            r"\bcertificate verify failed\b",
            r"\bCERTIFICATE_VERIFY_FAILED\b",
            r"\bx509\b",
            r"\bself[- ]signed certificate\b",
            r"\bSSLError\b",
            r"\bSSLCertVerificationError\b",
            r"\bunable to get local issuer certificate\b",
            r"\bcertificate has expired\b",
            r"\bCERT_HAS_EXPIRED\b",
            r"\bERR_TLS_CERT\w*",
            r"\bSSL routines\b",
            r"\btls: handshake failure\b",
        ),
    ),
    PatternDiagnoser(
        "dns",
        "infra",
        "The host name could not be resolved (DNS failure or wrong host).",
        "Check the host name and the resolver (/etc/resolv.conf, VPN, service discovery).",
        0.85,
        (
            r"\bcould not resolve (?:host|hostname)\b",
            r"\bname or service not known\b",
            r"\btemporary failure in name resolution\b",
            r"\bnodename nor servname\b",
            r"\bENOTFOUND\b",
            r"\bEAI_AGAIN\b",
            r"\bgetaddrinfo failed\b",
            r"\bNXDOMAIN\b",
            r"\bno such host\b",
            r"\bNameResolutionError\b",
            r"\bfailed to resolve '",
            r"\bUnknownHostException\b",
        ),
    ),
    PatternDiagnoser(
        "connection_refused",
        "infra",
        "Nothing is listening at the target address: the service is down.",
        "Start or restart the service (check its health and port); do not retry in a tight loop.",
        0.85,
        (
            r"\bconnection refused\b",
            r"\bConnectionRefusedError\b",
            r"\bECONNREFUSED\b",
            r"\berrno 111\b",
            r"\bfailed to establish a new connection\b",
            r"\bactively refused\b",
            r"\bNoBrokersAvailable\b",
            r"\bcannot connect to the docker daemon\b",
            r"\bis the [\w-]+ (?:daemon|server) running\b",
        ),
    ),
    PatternDiagnoser(
        "resource_exhaustion",
        "infra",
        "The machine ran out of a resource (disk, memory, file handles, nodes).",
        "Free or add capacity (disk, memory, ulimit, nodes) or reduce the job's footprint.",
        0.85,
        (
            r"\bno space left on device\b",
            r"\bENOSPC\b",
            r"\berrno 28\b",
            r"\bdisk quota exceeded\b",
            r"\bout of memory\b",
            r"\bOOMKilled\b",
            r"MemoryError\b",
            r"\bcannot allocate memory\b",
            r"\bunable to allocate [\d.]+ ?[KMGT]i?B\b",
            r"\btoo many open files\b",
            r"\bEMFILE\b",
            r"\berrno 24\b",
            r"\binsufficient (?:memory|cpu|nvidia\.com/gpu)\b",
            r"\bexit (?:status|code):? 137\b",
        ),
    ),
    PatternDiagnoser(
        "connection_reset",
        "transient",
        "The connection was dropped mid-request.",
        "Retry idempotent requests with backoff; if it persists, check proxies and keep-alive limits.",
        0.7,
        (
            r"\bconnection reset\b",
            r"\bConnectionResetError\b",
            r"\bECONNRESET\b",
            r"\berrno 104\b",
            r"\bbroken pipe\b",
            r"\bEPIPE\b",
            r"\bRemoteDisconnected\b",
            r"\bconnection aborted\b",
            r"\bserver closed the connection unexpectedly\b",
            r"\bIncompleteRead\b",
            r"\bsocket hang up\b",
        ),
    ),
    PatternDiagnoser(
        "timeout",
        "transient",
        "The operation timed out.",
        "Retry with backoff; if it keeps timing out, raise the timeout or check the dependency's latency.",
        0.75,
        (
            r"\btimed? ?out\b",
            r"\btimeout\b",
            r"\b\w*Timeout(?:Error|Exception)?\b",
            r"\bETIMEDOUT\b",
            r"\bDEADLINE_EXCEEDED\b",
            r"\bdeadline exceeded\b",
            r"\b504\b",
            r"\bgateway time-?out\b",
        ),
    ),
    PatternDiagnoser(
        "upstream_5xx",
        "transient",
        "The upstream service failed or is overloaded (5xx).",
        "Retry with backoff; check the provider's status page if it persists.",
        0.7,
        (
            r"\b(?:HTTP|status|code|error|returned)[\s:/]*5\d\d\b",
            r"\b5\d\d (?:Internal|Bad|Service|Gateway)\b",
            r"\binternal server error\b",
            r"\bbad gateway\b",
            r"\bservice unavailable\b",
            r"\bInternalServerError\b",
            r"\bServiceUnavailable\b",
            r"\btemporarily unavailable\b",
            r"\boverloaded",
            r"\bupstream connect error\b",
        ),
    ),
    PatternDiagnoser(
        "db_contention",
        "transient",
        "Concurrent transactions collided (lock, deadlock or serialisation failure).",
        "Retry the whole transaction with jittered backoff; keep transactions short.",
        0.8,
        (
            r"\bdeadlock\b",
            r"\bDeadlockDetected\b",
            r"\bdatabase (?:table )?is locked\b(?! (?:down|out)\b)",
            r"\bcould not serialize access\b",
            r"\bSerializationFailure\b",
            r"\block wait timeout\b",
            r"\bLockNotAvailable\b",
            r"\btry restarting transaction\b",
        ),
    ),
    PatternDiagnoser(
        "llm_request",
        "code",
        "The request to the model is invalid (too long or malformed).",
        "Shorten or summarise the prompt, lower max_tokens, or fix the request parameters.",
        0.8,
        (
            r"\bprompt is too long\b",
            r"\bmaximum context length\b",
            r"\bcontext[_ ]length[_ ]exceeded\b",
            r"\binvalid_request_error\b",
            r"\btoo many (?:input )?tokens\b",
        ),
    ),
    PatternDiagnoser(
        "missing_dependency",
        "config",
        "A required package, module or command is not installed.",
        "Install the dependency (or fix PATH / the version pin) in the agent's environment.",
        0.85,
        (
            r"\bModuleNotFoundError\b",
            r"\bno module named\b",
            r"\bImportError\b",
            r"\bcannot import name\b",
            r"\bcannot find module\b",
            r"\bcommand not found\b",
            r"^/bin/\w*sh: \d+: [\w.+-]+: not found",
            r"\bis not recognized as an internal or external command\b",
            r"\bno matching distribution found\b",
            r"\bcould not find a version that satisfies\b",
            r"\bERESOLVE\b",
            r"\bexit (?:status|code):? 127\b",
        ),
    ),
    PatternDiagnoser(
        "permission",
        "config",
        "The process lacks file-system or OS permission for the operation.",
        "Run with the right user/group, fix the path's permissions, or write somewhere writable.",
        0.85,
        (
            r"\bpermission denied\b",
            r"\bPermissionError\b",
            r"\bEACCES\b",
            r"\berrno 13\b",
            r"\boperation not permitted\b",
            r"\bEPERM\b",
            r"\bread-only file system\b",
            r"\baccess is denied\b",
        ),
    ),
    PatternDiagnoser(
        "missing_config",
        "config",
        "Configuration is missing or invalid (environment variable, config file, schema or model name).",
        "Set the missing variable / file / migration or fix the configured name, then retry.",
        0.75,
        (
            r"\benvironment variable\b",
            r"\benv var\b",
            r"(?-i:\bKeyError: '[A-Z][A-Z0-9]*_[A-Z0-9_]+')",
            r"\bmissing required (?:config|configuration|setting)\b",
            r"\bnot a git repository\b",
            r"\b(?:Scanner|Parser|YAML|TOML|Config)Error\b",
            r"\binvalid configuration\b",
            r"\bnot_found_error\b.*\bmodel\b",
            r"\bmodel_not_found\b",
            r"\bUndefinedTable\b",
            r"\brelation \"[^\"]+\" does not exist\b",
            r"\bno such table\b",
            r"(?:no such file or directory|ENOENT)[^\n]*(?:config|settings|\.env\b|\.ya?ml\b|\.toml\b|\.ini\b)",
        ),
    ),
    PatternDiagnoser(
        "missing_data",
        "code",
        "The requested file, key or resource does not exist.",
        "Check the path / id the agent used (it may be stale or mistyped) before retrying.",
        0.7,
        (
            r"\bFileNotFoundError\b",
            r"\bno such file or directory\b",
            r"\bENOENT\b",
            r"\bcannot find the (?:path|file) specified\b",
            r"\bNoSuchKey\b",
            r"\bNoSuchBucket\b",
            r"\bNoSuchEntity\b",
            r"\bResourceNotFoundException\b",
            r"\b404\b",
            r"^(?:HTTP \d+ )?not found\b",
            r"\bno such (?:customer|object|resource|record|user|key)\b",
        ),
    ),
    PatternDiagnoser(
        "code_exception",
        "code",
        "A programming error in the agent's code or tool call.",
        "Fix the code path named in the traceback (add the missing guard, argument or type conversion).",
        0.8,
        (
            r"\b(?:KeyError|AttributeError|TypeError|ValueError|IndexError|NameError|ZeroDivisionError|AssertionError"
            r"|RecursionError|UnboundLocalError|NotImplementedError|JSONDecodeError|SyntaxError|IndentationError"
            r"|UnicodeDecodeError|UnicodeEncodeError|StopIteration|ValidationError|ReferenceError|RangeError"
            r"|NullPointerException|ClassCastException|IllegalArgumentException|IllegalStateException"
            r"|ArrayIndexOutOfBoundsException|UniqueViolation|IntegrityError|ProgrammingError"
            r"|InvalidRequestError)\b",
            r"\bnil pointer dereference\b",
            r"\bpanic: runtime error\b",
            r"\bis not a function\b",
            r"\bcannot read propert(?:y|ies) of (?:undefined|null)\b",
            r"\bis not defined\b",
            r"\bsyntax error\b",
            r"\bunexpected token\b",
            r"\bviolates (?:unique|foreign key|not-null|check) constraint\b",
            r"\b(?:UNIQUE|NOT NULL|FOREIGN KEY|CHECK) constraint failed\b",
            r"\bmerge conflict\b",
            r"\bnon-fast-forward\b",
            r"\bthe following arguments are required\b",
            r"\bmissing \d+ required (?:positional|keyword)",
            r"\bunexpected keyword argument\b",
            r"^FAILED \S+::\S+",
        ),
    ),
)


def register_builtins() -> None:
    """Put the built-ins into the process-wide registry at orders 100, 110, … (idempotent)."""
    for index, diagnoser in enumerate(BUILTINS):
        REGISTRY.register(diagnoser.name, diagnoser, order=100 + 10 * index, replace=True)


register_builtins()
