"""The generic cue tier: families, precedence, conflicts, the audit, and its place in the diagnosis chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.failures import FailureInput, cues, normalize
from kaos_dream.failures.diagnosis import REGISTRY


def failure(message: str, tool: str = "svc") -> FailureInput:
    norm = normalize(message)
    return FailureInput(tool, norm.key_lines, message, norm.exception_type)


@pytest.mark.parametrize(
    ("message", "category", "cue"),
    [
        ("acme.errors.UpstreamTimeoutFault: ledger did not answer", "transient", "class-name/Timeout"),
        ("acme.LedgerUnavailableException: try later", "transient", "class-name/Unavailable"),
        ("acme.errors.QuotaThrottledFault: slow down", "transient", "class-name/Throttl"),
        ("acme.ShelfPermissionFault: user 7 on shelf 9", "config", "class-name/Permission"),
        ("acme.PlannerSyntaxError: near 'SELEKT'", "code", "class-name/Syntax"),
        ("rpc failed: StatusCode.PERMISSION_DENIED on ledger.Write", "config", "grpc-status/PERMISSION_DENIED"),
        ("ledger call failed: code = Unavailable desc = draining", "transient", "grpc-status/UNAVAILABLE"),
        ("pod ledger-7 status OOMKilled after 3 restarts", "infra", "orchestrator-state/OOMKilled"),
        ("ledger store answered LOADING, dataset not ready", "transient", "datastore-state/LOADING"),
        ("mail relay said (451, b'4.7.1 greylisted') for ana", "transient", "smtp-status/4.x.x"),
        ("ledger/render.go:14:2: error: frob undeclared", "code", "source-location/file:line error"),
        ("frob: too many connections for role ledger", "infra", "wording/connection limit"),
        ("frobnicate: command not found", "config", "wording/not installed"),
    ],
)
def test_cue_families_name_the_category_and_the_cue(message: str, category: str, cue: str) -> None:
    found = cues.generic_diagnosis(failure(message))
    assert found is not None, message
    assert (found.category, found.diagnoser) == (category, f"{cues.DIAGNOSER_PREFIX}{cue}")
    assert found.confidence <= 0.6
    assert "Generic cue" in found.root_cause


@pytest.mark.parametrize(
    ("message", "category", "cue"),
    [
        # class names a module path gives without an Error/Exception suffix
        ("frob.errors.NoBrokersAvailable: cluster empty", "infra", "class-name/NoServers"),
        ("acme.ledger.LedgerDisconnectedError: peer went away", "transient", "class-name/Disconnected"),
        ("frob.exc.UnrecognizedFieldException: 'colour' on Widget", "code", "class-name/Unrecognized"),
        ("frob.db.SerializationFailure: concurrent update on ledger", "transient", "class-name/Deadlock"),
        ("frob.orm.CannotAcquireLockException: ledger row", "transient", "class-name/LockContention"),
        ("frob.ui.UninitializedPropertyAccessException: lateinit adapter", "code", "class-name/Null"),
        ("frob.errors.InvalidShelfStateError: shelf 9 is archived", "code", "class-name/Invalid"),
        # wording reads a lowerCamelCase code's parts, never a class name's
        ("ldap: automatic bind not successful - invalidCredentials", "config", "wording/credentials"),
        ("ledger CDN: 504 ERROR The request could not be satisfied.", "transient", "http-status/504"),
        ("ledger job: Runtime exited with error: signal: killed", "infra", "signal/killed"),
        ("kubelet: Node has disk pressure", "infra", "wording/storage full"),
        ("ERROR: Insufficient capacity in availability zone b", "infra", "wording/exhausted"),
        ("ssh: Server 'ledger' not found in known_hosts", "config", "wording/certificate"),
        ("ftp: 530 Login incorrect.", "config", "wording/credentials"),
        ("** (FunctionClauseError) no function clause matching in Ledger.total/1", "code",
         "compiler/has no attribute"),
        ("frob: Container killed for exceeding memory limits", "infra", "wording/out of memory"),
        ("frob.orm.NoResultFound: No row was found when one was required", "code", "wording/object missing"),
        # compilers and runtimes
        ("ledger.c:12:1: note: expected ';' before '}' token", "code", "compiler/unexpected token"),
        ('ledger: could not obtain lock on relation "shelves"', "transient", "wording/locked"),

        ("error: cannot borrow `ledger` as mutable more than once at a time", "code", "compiler/borrow checker"),
        ("fatal error: all goroutines are asleep - deadlock!", "code", "wording/panic"),
        ("ledger: requires frobc 2.4 or newer, found 2.1", "config", "wording/incompatible"),
        ('frob: connection on socket "/tmp/.s.FROB" failed. Is the server running locally?', "infra",
         "wording/refused"),
        # errno names, process limits, exit codes and HTTP statuses with a meaning of their own
        ("worker: fork: retry: Resource temporarily unavailable", "infra", "errno/process limit"),
        ("exec /app/run: exec format error", "config", "errno/exec format"),
        ("ledger socket: ENOTCONN on write", "transient", "errno/not connected"),
        ("ledger answered HTTP 425 Too Early", "transient", "http-status/425"),
        ("ledger: HTTP 507 Insufficient Storage", "infra", "http-status/507"),
        ("ledger: HTTP 501 Not Implemented for PATCH", "code", "http-status/501"),
        # a cause in a status code's body decides over the status
        ("ledger: HTTP 429 - you exceeded your current quota, check your plan and billing details", "config",
         "wording/plan or billing"),
        ("ledger: HTTP 429 - index blocked, disk usage exceeded flood-stage watermark", "infra", "wording/disk full"),
        # wording families
        ("ledger store: storage space exceeded on shard 3", "infra", "wording/disk full"),
        ("./deploy.sh: line 9: [: -eq: unary operator expected", "code", "wording/shell misuse"),
        ('frob: column reference "id" is ambiguous', "code", "wording/failed validation"),
        ("mailer: STARTTLS is not supported by the relay", "config", "wording/transport security"),
        ("frob: invalid access token passed", "config", "wording/credentials"),
        ("frob: Page.goto: net::ERR_NAME_NOT_RESOLVED at the staging host", "infra", "wording/name resolution"),
    ],
)
def test_wider_cue_families(message: str, category: str, cue: str) -> None:
    found = cues.generic_diagnosis(failure(message))
    assert found is not None, message
    assert (found.category, found.diagnoser) == (category, f"{cues.DIAGNOSER_PREFIX}{cue}")


@pytest.mark.parametrize(("message", "category", "cue"), [
    # the eighth widening's families, in wordings no specific rule names
    ("frobdb: write refused (SQLSTATE 40P01)", "transient", "sqlstate/40 rollback"),
    ("ledger: SQLSTATE[23514]: row rejected", "code", "sqlstate/22/23 data"),
    ("ledger: sql state: 42883, no operator matches", "code", "sqlstate/42 syntax"),
    ("ledger: SQLSTATE 42P01 on report_daily", "config", "sqlstate/3D/3F missing catalog"),
    ("ledger: SQLSTATE=28P01 for role app", "config", "sqlstate/28 authorization"),
    ("ledger: pgcode 53200 while sorting", "infra", "sqlstate/53 resources"),
    ("ledger: SQLSTATE 57P01 during the nightly job", "transient", "sqlstate/57P0x shutdown"),
    ("frob: rpc failed with code = OutOfRange page 9", "code", "grpc-status/OUT_OF_RANGE"),
    ("frob: StatusCode.DATA_LOSS chunk 12", "infra", "grpc-status/DATA_LOSS"),
    ("frob: origin answered HTTP 521 Web Server Is Down", "infra", "http-status/521/523"),
    ("frob: edge said HTTP 526 Invalid SSL Certificate", "config", "http-status/525/526"),
    ("frob: server said 426 Upgrade Required", "config", "http-status/426"),
    ("Warning  NetworkNotReady  kubelet  ledger-0 cannot start", "infra", "orchestrator-state/FailedCreatePodSandBox"),
    ("ledger-7f: status OutOfcpu, the node could not admit it", "infra", "orchestrator-state/OutOfResource"),
    ('Error creating: pods "ledger-1" is forbidden: exceeded quota: team-a', "config",
     "orchestrator-state/exceeded quota"),
    ("frob: io_uring setup failed: ENOSYS", "config", "errno/not implemented here"),
    ("frob: rename across mounts failed: EXDEV", "code", "errno/bad message"),
    ("frob: cannot replace the binary: ETXTBSY", "transient", "errno/lock"),
    ("frob: flock on the share: ENOLCK", "infra", "errno/no locks"),
    ("worker exited: Floating point exception (core dumped)", "code", "signal/arithmetic trap"),
    ("worker exited: Illegal instruction", "config", "signal/illegal instruction"),
    ("worker exited: CPU time limit exceeded", "infra", "signal/resource limit signal"),
    ("frob: An error occurred (ServiceQuotaExceededException) when creating", "config", "class-name/Quota"),
    ("frob: An error occurred (RequestTimeTooSkewed) when signing", "config", "class-name/ClockSkew"),
    ("frob: An error occurred (OptInRequired) for the region", "config", "class-name/NotEnabled"),
    ("frob: Maps API has not been used in project 12 before", "config", "wording/api disabled"),
])
def test_eighth_widening_cue_families(message: str, category: str, cue: str) -> None:
    found = cues.generic_diagnosis(failure(message))
    assert found is not None, message
    assert (found.category, found.diagnoser) == (category, f"{cues.DIAGNOSER_PREFIX}{cue}")


@pytest.mark.parametrize("message", [
    # near misses of the eighth widening's cues
    "frob: row 23514 exported",  # a number without SQLSTATE
    "frob: bound to 10.0.0.9: EADDRNOTAVAIL",  # bind to a foreign address (config) or no local ports (infra)
    "frob: An error occurred (ConditionalCheckFailedException) when calling PutItem",  # the sets disagree
])
def test_eighth_widening_cue_near_misses_say_nothing(message: str) -> None:
    assert cues.generic_diagnosis(failure(message)) is None, message


@pytest.mark.parametrize("message", [
    "ledger: the fork in the road was chosen",  # no "fork:" failure
    "frob: shipped 425 widgets and 507 gadgets",  # numbers that are not said to be a status
    "frob.errors.ResourceExhausted: quota for the day",  # a class name is not split into wording
    "frob: the request was early, HTTP 200",  # a success code is no cue
])
def test_near_misses_of_the_wider_families_get_no_answer(message: str) -> None:
    assert cues.generic_diagnosis(failure(message)) is None


def test_a_cue_below_the_key_lines_answers_only_when_they_say_nothing() -> None:
    """A header first and the cause three lines down: the cue is read there, with a lower confidence."""
    deep = failure("frob.errors.LedgerWriteFailure:\n  at step 3\n  while flushing\n  the disk is full")
    found = cues.generic_diagnosis(deep)
    assert found is not None and found.category == "infra" and found.diagnoser == "cue:wording/disk full"
    assert "below its first lines" in found.root_cause
    assert found.confidence == pytest.approx(cues.LEVEL_CONFIDENCE[2] - cues.DEEP_PENALTY)
    # the key lines name a cue: the rest of the message is not read
    top = failure("frob: HTTP 503 Service Unavailable\n  at step 3\n  while flushing\n  the disk is full")
    found = cues.generic_diagnosis(top)
    assert found is not None and found.diagnoser == "cue:http-status/503"


def test_states_come_before_class_names_and_wording() -> None:
    """An explicit status beats a class-name part that names another category."""
    found = cues.generic_diagnosis(failure("acme.PlannerSyntaxError: upstream said HTTP 503 Service Unavailable"))
    assert found is not None and found.category == "transient" and found.diagnoser == "cue:http-status/503"


def test_disagreeing_cues_of_one_rank_leave_the_failure_unknown() -> None:
    """A timeout class name and 'invalid input' wording name different categories: no answer."""
    assert cues.generic_diagnosis(failure("acme.LedgerTimeoutFault: invalid input for frob")) is None
    assert cues.decide(cues.matches(failure("acme.LedgerTimeoutFault: invalid input"), cues.CUES)) is None


def test_a_match_inside_a_longer_one_gives_way() -> None:
    """'not found' lies inside 'command not found': the longer cue decides."""
    found = cues.matches(failure("frobnicate: command not found"), cues.CUES)
    assert {m.cue.name for m in found} >= {"wording/not installed", "wording/not found"}
    assert [m.cue.name for m in cues.contenders(found)] == ["wording/not installed"]


def test_a_bare_500_is_unknown_but_an_overloaded_or_unavailable_5xx_is_transient() -> None:
    from kaos_dream.failures.diagnosis import REGISTRY

    bare = failure("requests.exceptions.HTTPError: 500 Server Error: Internal Server Error for url: https://a.io/x")
    assert REGISTRY.diagnose(bare) is None and cues.generic_diagnosis(bare) is None
    assert cues.generic_diagnosis(failure("HTTP 500 Internal Server Error from https://a.io/x")) is None
    for message in ("requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: https://a.io/x",
                    "anthropic.InternalServerError: Error code: 529 - {'error': {'type': 'overloaded_error'}}"):
        found = REGISTRY.diagnose(failure(message)) or cues.generic_diagnosis(failure(message))
        assert found is not None and found.category == "transient", message


def test_refresh_names_a_credential_only_as_a_class_of_its_own() -> None:
    found = cues.generic_diagnosis(failure("google.auth.exceptions.RefreshError: the token was revoked"))
    assert found is not None and found.category == "config"
    assert cues.generic_diagnosis(failure("acme.ProtoRefreshError: boom")) is None


def test_systemd_setup_statuses_are_configuration() -> None:
    message = ("Job for w.service failed because the control process exited with error code.\n"
               "See \"systemctl status w.service\" for details.\n"
               "    Process: 41 ExecStart=/opt/w (code=exited, status=203/EXEC)\n"
               "w.service: Failed at step EXEC spawning /opt/w: No such file or directory")
    found = cues.generic_diagnosis(FailureInput("systemctl", "\n".join(message.splitlines()[:2]), message, None))
    assert found is not None and found.category == "config" and found.diagnoser == "cue:signal/systemd setup"


@pytest.mark.parametrize(("message", "cue"), [
    # retired by the eighth widening's audit (blind7-9 joined it): a NotFound class is as often a missing
    # provisioned resource (config) as a missing object (code); "build failed" is as often opaque
    ("acme.WidgetNotFoundFault: widget 12", "class-name/NotFound"),
    ("Ledger::ShelfNotFound: shelf 9", "class-name/NotFound"),
    ('frob: failed to load config file "/etc/frob.yaml": bad indent', "wording/config file"),
    ("Build failed; check build logs for details", "wording/build failed"),
    ("because of conflicting dependencies the resolver gave up", "wording/dependency resolution"),
])
def test_cues_the_audit_retired_stay_silent(message: str, cue: str) -> None:
    assert cue in cues.RETIRED
    assert cues.generic_diagnosis(failure(message)) is None
    unretired = cues.CueDiagnoser(retired=frozenset())(failure(message))
    assert unretired is not None and unretired.diagnoser == f"{cues.DIAGNOSER_PREFIX}{cue}"


def test_a_router_log_status_is_not_a_cue() -> None:
    """Heroku's router line states the status the client got; its H code says why (H10 is opaque)."""
    line = 'at=error code=H10 desc="App crashed" method=GET path="/" host=x.herokuapp.com status=503 bytes='
    assert cues.generic_diagnosis(failure(line)) is None
    assert cues.generic_diagnosis(failure("upstream answered: status=503 Service Unavailable")).category == "transient"


def test_retired_cues_never_answer_and_no_cue_means_no_answer() -> None:
    assert "wording/not found" in cues.RETIRED
    assert cues.generic_diagnosis(failure("ledger widget not found")) is None
    assert cues.CueDiagnoser(retired=frozenset())(failure("ledger widget not found")) is not None
    assert cues.generic_diagnosis(failure("merchant account suspended by the risk review team")) is None


def test_class_names_reads_types_identifiers_snake_case_and_service_codes() -> None:
    names = cues.class_names(failure(
        "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling PutObject: "
        "mapper_parsing_exception raised"))
    assert names.splitlines() == ["botocore", "exceptions", "ClientError", "MapperParsingException", "SlowDown"]


def test_audit_retires_cues_wrong_more_than_one_time_in_four() -> None:
    timeout = cues.matches(failure("acme.LedgerTimeoutFault: x"), cues.CUES)
    assert [m.cue.name for m in cues.contenders(timeout)] == ["class-name/Timeout"]
    assert cues.audit([(timeout, "transient"), (timeout, "infra")]) == {"class-name/Timeout"}
    assert cues.audit([(timeout, "transient")] * 3 + [(timeout, "infra")]) == frozenset()
    assert cues.audit([(timeout, "infra")]) == frozenset()  # fired once: too little to judge


def test_record_uses_cues_only_after_the_specific_rules(tmp_path: Path) -> None:
    with Library(tmp_path / "k.db", clock=ManualClock(1_767_225_600.0), settings=Settings(llm=False)) as lib:
        cue = lib.failures.record("ledger", "acme.errors.UpstreamTimeoutFault: ledger did not answer")
        specific = lib.failures.record("ledger", "psql: error: connection to server failed: Connection refused")
        row = lib.failures.get(cue.fingerprint_id)
        assert (row["category"], row["diagnoser"], row["diagnostic_method"]) == (
            "transient", "cue:class-name/Timeout", "heuristic")
        assert "UpstreamTimeoutFault" in row["root_cause"]
        assert lib.failures.get(specific.fingerprint_id)["diagnoser"] == "connection_refused"
        assert REGISTRY.diagnose(failure("acme.errors.UpstreamTimeoutFault: ledger did not answer")) is None


def test_a_label_learned_from_a_person_comes_before_a_cue(tmp_path: Path) -> None:
    """A person said this fault is config; a close new variant follows the person, not the cue."""
    with Library(tmp_path / "k.db", clock=ManualClock(1_767_225_600.0), settings=Settings(llm=False)) as lib:
        first = lib.failures.record("ledger", "acme.errors.VaultTimeoutFault: vault sealed for ledger tenant")
        assert lib.failures.get(first.fingerprint_id)["category"] == "transient"
        lib.failures.diagnose(first.fingerprint_id, category="config", by="ana")
        later = lib.failures.record("ledger", "acme.errors.VaultTimeoutFault: vault sealed for ledger tenant eu")
        row = lib.failures.get(later.fingerprint_id)
        assert later.fingerprint_id != first.fingerprint_id
        assert (row["category"], row["learned_from"]) == ("config", first.fingerprint_id)


def test_the_source_location_cue_stays_linear_on_long_dotted_words() -> None:
    """It used to try every dot of a long dotted word as a path's start: 10,000 characters took tens of
    seconds. Now a path starts only where a path can start (CPU of two sizes, never wall time)."""
    from .scaling import assert_linear

    cue = next(c for c in cues.CUES if c.name == "source-location/file:line error")
    assert cue.regex.search("a." * 5000 + "B") is None
    assert_linear(lambda n: cue.regex.search("a." * n + "B"), small=400)
    assert cue.regex.search("see ledger/render.go:14:2: error: frob undeclared") is not None
