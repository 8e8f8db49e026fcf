"""Normalisation: the same failure gets the same fingerprint, different failures different ones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaos_dream.failures.fingerprint import bounded_sample, fingerprint_hash
from kaos_dream.failures.normalize import ALGORITHM, normalize


def fp(tool: str, message: str) -> str:
    return fingerprint_hash(tool, normalize(message))


def tb(func: str, line: int, exc: str, path: str = "/srv/app/jobs.py") -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/srv/app/main.py", line {line + 30}, in <module>\n    run()\n'
        f'  File "{path}", line {line}, in {func}\n    total = a + b\n'
        f"{exc}\n"
    )


SAME = [
    (
        "emails",
        "invite failed for ana@example.com: mailbox full",
        "invite failed for bo.li+x@corp.example.org: mailbox full",
    ),
    ("urls", "GET https://api.x.io/v1/users/17 failed", "GET http://api.y.dev/v2/items?id=9 failed"),
    ("hosts", "could not resolve hostname api.internal", "could not resolve hostname db-2.prod.internal"),
    ("ip and port", "connect ECONNREFUSED 127.0.0.1:6379", "connect ECONNREFUSED 10.1.4.20:6380"),
    ("ipv6", "connect to [::1]:8080 refused", "connect to [fe80::1ff:fe23:4567:890a]:9090 refused"),
    ("uuid", "job 4f8d2c1e-aaaa-bbbb-cccc-1234567890ab failed", "job 0b7e1d22-1111-4222-8333-abcdefabcdef failed"),
    ("ulid", "run 01HZY3T8B4M2K6Q9W7E5R1N0JD aborted", "run 01J0A2B3C4D5E6F7G8H9JKMNPQ aborted"),
    ("hex", "object 7f3a9c2e11 missing in pack", "object deadbeef42 missing in pack"),
    ("pointer", "<Conn object at 0x7f3b2c1d9e50> closed", "<Conn object at 0x7f00aa11bb22> closed"),
    ("iso date", "2026-01-02T10:11:12.123Z job failed", "2025-12-31T23:59:59+02:00 job failed"),
    ("space date", "2026-01-02 10:11:12 job failed", "2024-06-30 01:02:03 job failed"),
    ("rfc date", "Mon, 02 Jan 2026 10:11:12 GMT job failed", "Tue, 30 Jun 2024 01:02:03 GMT job failed"),
    ("durations", "retry after 60s", "retry after 1.5 seconds"),
    ("go durations", "back-off 5m0s restarting", "back-off 2m40s restarting"),
    ("posix paths", "cannot open /tmp/tmpab12/out.json", "cannot open /var/lib/app/cache/x.json"),
    ("windows paths", r"cannot open C:\Users\dev\AppData\Local\Temp\tmp1\out", r"cannot open D:\work\out.txt"),
    ("numbers", "processed 120 of 500 rows", "processed 7 of 80 rows"),
    ("quoted after =", "bad value job='alpha'", 'bad value job="beta-2"'),
    ("case and spacing", "Connection   Refused", "connection refused"),
    ("only first two lines", "boom\nsecond line\nthird line A", "boom\nsecond line\nthird line B"),
    ("blank lines ignored", "\n\nboom\n\nsecond", "boom\nsecond"),
    (
        "traceback line numbers",
        tb("compute_total", 120, "TypeError: bad operand"),
        tb("compute_total", 131, "TypeError: bad operand", "/home/ci/app/jobs.py"),
    ),
    (
        "os error path",
        "OSError: [Errno 28] No space left on device: '/a/b.bin'",
        "OSError: [Errno 28] No space left on device",
    ),
    ("pod names", "pod/worker-7d9f8b6c5-x2k4p crashed", "pod/worker-5c8d7f9b4-q8m2z crashed"),
    ("sizes", "tried to allocate 2.00 GiB", "tried to allocate 512 MiB"),
    (
        "dated file names",
        "cp: error writing '/backups/db-2026-11-30.dump': No space left on device",
        "cp: error writing '/var/backups/pg/full.dump': No space left on device",
    ),
    (
        "query strings",
        "Max retries exceeded with url: /v1/events?since=2026-11-30T10:00:00Z (Caused by SSLError)",
        "Max retries exceeded with url: /v1/events (Caused by SSLError)",
    ),
    (
        "boxed diagnostics",
        "\u2577\n\u2502 Error: No valid credential sources found\n\u2502 \n\u2502   with provider[\"aws\"]",
        "Error: No valid credential sources found\n\n  with provider[\"aws\"]",
    ),
    # issue 34, classes of volatile parts a real tool prints (ALGORITHM 5)
    (
        "list of candidate versions",
        "ERROR: No matching version for flask==9.0 (from versions: 2.0.1, 2.0.2, 3.0.0)",
        "ERROR: No matching version for flask==9.0 (from versions: 3.1.0)",
    ),
    ("severity prefix", "(error) READONLY You can't write against a read only replica.",
     "error: READONLY You can't write against a read only replica."),
    ("bracketed severity", "[ERROR] Failed to execute goal: no POM", "ERROR: Failed to execute goal: no POM"),
    ("transfer prefix", "download failed: s3://logs-a/2026/x.gz to ./x.gz An error occurred (403) when calling the"
     " HeadObject operation: Forbidden", "An error occurred (403) when calling the HeadObject operation: Forbidden"),
    ("process holding a lock", "lock is held by process 4411 (dnf)", "lock is held by process 97 (packagekitd)"),
    ("process name after a pid", "killed pid=812, name=node, oom", "killed pid=77, name=java, oom"),
    ("index glued to a process word", "[worker3] heartbeat lost", "[worker12] heartbeat lost"),
    ("glog header", "E1130 08:01:02.123456 5512 raft.cc:77] leader lost",
     "E0102 23:11:10.000001 17 raft.cc:91] leader lost"),
    ("bus address", "PCIe error at 0000:af:00.1 recovered", "PCIe error at 0000:1c:00.0 recovered"),
    ("resource name", "denied on resource 'projects/a-1/buckets/logs'", "denied on resource 'projects/b/buckets/tmp'"),
    ("git pathspec", "error: pathspec 'hotfix/x-2' did not match", "error: pathspec 'main' did not match"),
    ("file given to a flag", "cannot read -c constraints.txt (line 3)", "cannot read -c ci/constraints.txt (line 9)"),
    ("label of a url", "artifact x:1.0 not in internal (https://repo.a.io/m2)",
     "artifact x:1.0 not in mirror-eu (http://m.b.dev/maven)"),
    ("bracketed target", "failed: [app-2] (item=redis) => {\"msg\": \"no such unit\"}",
     "failed: [10.0.0.7] (item=redis) => {\"msg\": \"no such unit\"}"),
    ("kernel kB", "oom: anon-rss:15902312kB file-rss:0kB", "oom: anon-rss:812kB file-rss:2048kB"),
    ("short image name", "Error: short-name \"alpine:3\" did not resolve",
     "Error: short-name \"nginx\" did not resolve"),
    ("make target", "make: *** [Makefile:12: test] Error 2", "make: *** [build.mk:40: lint-all] Error 2"),
    ("scheduler reasons", "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 x.",
     "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {role: db}. preemption: 0/2"
     " nodes are available: 2 y, 1 z."),
]

DIFFERENT = [
    ("tool counts", ("http_get", "HTTP 429 Too Many Requests"), ("http_post", "HTTP 429 Too Many Requests")),
    ("status codes", ("h", "Request failed with status code 404"), ("h", "Request failed with status code 500")),
    ("http reason", ("h", "HTTP 429 Too Many Requests"), ("h", "HTTP 503 Service Unavailable")),
    (
        "errno",
        ("f", "OSError: [Errno 28] No space left on device"),
        ("f", "OSError: [Errno 13] No space left on device"),
    ),
    ("exit codes", ("s", "process exited with exit code 137"), ("s", "process exited with exit code 1")),
    ("exception type", ("p", "KeyError: 'x'"), ("p", "IndexError: 'x'")),
    ("traceback function", ("p", tb("parse_row", 10, "KeyError: 'id'")), ("p", tb("load_user", 10, "KeyError: 'id'"))),
    ("traceback exception", ("p", tb("f", 10, "KeyError: 'id'")), ("p", tb("f", 10, "ValueError: bad id"))),
    ("words", ("d", "connection refused"), ("d", "connection reset")),
    ("second line", ("g", "fatal: error\nhint: pull first"), ("g", "fatal: error\nhint: check your key")),
    ("key names", ("p", "KeyError: 'tried_actions'"), ("p", "KeyError: 'grid'")),
    ("no version at all", ("pip", "ERROR: No matching version for x==1 (from versions: none)"),
     ("pip", "ERROR: No matching version for x==1 (from versions: 0.1)")),
    ("package in a conflict", ("pip", "ERROR: Cannot install -r a.txt (line 1) and idna==3 because of conflicts"),
     ("pip", "ERROR: Cannot install -r a.txt (line 1) and chardet==3 because of conflicts")),
    ("permission named", ("gcloud", "permission 'run.services.update' denied on resource 'a'"),
     ("gcloud", "permission 'run.services.delete' denied on resource 'a'")),
    ("scheduler reason kinds", ("k", "0/3 nodes are available: 3 Insufficient cpu."),
     ("k", "0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims.")),
    ("a taint alone", ("k", "0/3 nodes are available: 3 node(s) had untolerated taint {gpu: only}."),
     ("k", "0/3 nodes are available: 3 Insufficient cpu.")),
    ("fatal is not error", ("git", "fatal: not a git repository"), ("git", "error: not a git repository")),
]


@pytest.mark.parametrize(("label", "a", "b"), SAME, ids=[s[0] for s in SAME])
def test_same_failure_same_fingerprint(label: str, a: str, b: str) -> None:
    assert fp("tool", a) == fp("tool", b), (normalize(a), normalize(b))


@pytest.mark.parametrize(("label", "a", "b"), DIFFERENT, ids=[d[0] for d in DIFFERENT])
def test_different_failures_different_fingerprints(label: str, a: tuple[str, str], b: tuple[str, str]) -> None:
    assert fp(*a) != fp(*b), (normalize(a[1]), normalize(b[1]))


def test_traceback_keeps_exception_type_and_last_function() -> None:
    norm = normalize(tb("compute_total", 120, "TypeError: unsupported operand type(s) for +: 'int' and 'str'"))
    assert norm.exception_type == "TypeError"
    assert norm.text.endswith("@ compute_total")
    assert "120" not in norm.text and "main.py" not in norm.text


def test_boxed_diagnostic_keys_on_its_own_lines() -> None:
    norm = normalize("Planning failed.\n\u2577\n\u2502 Error: No valid credential sources found\n\u2502 \n\u2575")
    assert norm.key_lines == "Planning failed.\nError: No valid credential sources found"


def test_exception_type_of_plain_message() -> None:
    assert normalize("ConnectionRefusedError: localhost:8000").exception_type == "ConnectionRefusedError"
    assert normalize("could not resolve hostname api.internal").exception_type is None


def test_algorithm_version_is_part_of_the_hash() -> None:
    norm = normalize("boom")
    assert fingerprint_hash("t", norm, ALGORITHM) != fingerprint_hash("t", norm, ALGORITHM + 1)


def test_bounded_sample_keeps_head_and_tail() -> None:
    message = "HEAD " + "x" * 100_000 + " KeyError: 'tail'"
    sample = bounded_sample(message, 2000)
    assert len(sample) <= 2000
    assert sample.startswith("HEAD ") and sample.endswith("KeyError: 'tail'")
    assert "characters omitted" in sample
    assert bounded_sample("short", 2000) == "short"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=600) | st.text("\ue000\ue100\ue101abc 404:=/'", max_size=60), st.text(min_size=1, max_size=20))
def test_any_text_normalises_deterministically(message: str, tool: str) -> None:
    first = normalize(message)
    assert normalize(message) == first
    assert fingerprint_hash(tool, first) == fingerprint_hash(tool, normalize(message))
    assert "\ue000" not in first.text  # protected tokens are always restored


def test_numbers_glued_to_units_normalise_and_the_unit_still_counts() -> None:
    """'7kg' and '9kg' are one failure (a value), but a different unit is a different message."""
    kg7 = normalize("ValueError: could not convert '7kg' to float")
    kg9 = normalize("ValueError: could not convert '9kg' to float")
    assert kg7.text == kg9.text == "valueerror: could not convert '<n>kg' to float"
    assert fingerprint_hash("parse", kg7) == fingerprint_hash("parse", kg9)
    px = normalize("ValueError: could not convert '7px' to float")
    assert fingerprint_hash("parse", px) != fingerprint_hash("parse", kg7)
    assert normalize("weight 12.5kg exceeds 10kg limit").text == "weight <n>kg exceeds <n>kg limit"
    assert normalize("retry 3rd attempt failed").text == normalize("retry 4th attempt failed").text
    # Codes that are not values keep their digits.
    assert normalize("HTTP 5xx from upstream").text == "http 5xx from upstream"
    assert normalize("x86_64 wheel missing").text == "x86_64 wheel missing"


def test_key_lines_pass_over_lines_that_say_nothing() -> None:
    """A bare severity spacer, a progress step and a tool's banner are not the failure (issue 34)."""
    npm = normalize("npm ERR! code EUSAGE\nnpm ERR!\nnpm ERR! lock file out of step\nnpm ERR! more")
    assert npm.key_lines == "npm ERR! code EUSAGE\nnpm ERR! lock file out of step"
    yarn = normalize("yarn install v1.22.22\n[1/4] Resolving packages...\nerror lockfile stale\ninfo see docs")
    assert yarn.key_lines == "error lockfile stale\ninfo see docs"
    assert normalize("ERROR:\n").key_lines == "ERROR:"  # nothing else: the spacer is all there is
