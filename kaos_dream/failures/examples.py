"""What each built-in rule and cue covers, shown by messages (issue 34: rules you can see).

Every rule of :mod:`.heuristics` states its family here (:data:`RULE_FAMILIES`; a cue's family is part of its
name) and carries example messages: positives it must decide or match, and a near miss it must not (a message
that shares its words but is another failure). ``tests/test_failures_rule_examples.py`` checks every one, so a
widened pattern that starts taking its neighbour's messages fails a test that names both. The examples were
chosen from the tuning corpora (the shortest message a rule decides, the closest one it does not) or written
for a cue no corpus message shows; they are kept by hand from here on: add one with every new rule or cue.
"""

from __future__ import annotations

RULE_FAMILIES: dict[str, str] = {
    'app_boot_failure': 'a platform reporting the app never bound its port in time (Heroku R10/H20, $PORT)',
    'own_import_error': "an import of a name the project's own module does not define (circular or renamed)",
    'datastore_capacity': 'a data store or broker out of memory, disk or connection slots (maxmemory, max clients)',
    'pool_exhausted': 'a client connection pool with no free connection in time (pool timeouts, QueuePool)',
    'service_sealed_or_crashed': 'a service up but not serving (a sealed secret store, a crashed page or target)',
    'billing': 'an account out of credit or quota with its provider (insufficient_quota, payment required)',
    'message_too_large': 'a request or message larger than the receiver accepts (413, max message size)',
    'rate_limit': 'rate limiting and throttling (429, Throttling/SlowDown codes, rate exceeded)',
    'datastore_failover': 'a data store or broker electing a leader, failing over or still loading its data',
    'auth': 'credentials rejected, missing or expired (401, invalid keys or tokens, login failures)',
    'tls_transport_dropped': 'a connection dropped during the TLS handshake or stream (an EOF, not a certificate)',
    'tls': 'TLS trust and certificate failures (untrusted, expired, wrong host name)',
    'dns': 'host names that do not resolve (NXDOMAIN, getaddrinfo, name resolution failures)',
    'grpc_unavailable': 'gRPC UNAVAILABLE from a channel that found no ready server',
    'connection_refused': 'nothing listening at the target address (ECONNREFUSED, connection refused)',
    'container_config': 'a container that cannot start: image pull failures, missing secrets or config maps',
    'port_in_use': 'an address or port another process already holds (EADDRINUSE, address already in use)',
    'resource_exhaustion': 'a machine out of disk, memory, file handles, processes or schedulable nodes',
    'storage_attach': 'volumes the orchestrator cannot attach or mount on a node',
    'hardware_fault': 'hardware failures under a job (GPU Xid or ECC errors, a GPU off the bus, I/O errors)',
    'ci_agent_lost': 'a CI runner or build agent that went away during the job',
    'broker_topic_missing': 'a producer waiting for a topic the cluster does not have',
    'package_lock_held': "a package manager's lock held by another of its processes (apt, dpkg)",
    'connection_reset': 'connections dropped mid-request (ECONNRESET, broken pipe, reset by peer)',
    'timeout': 'operations that timed out (deadline exceeded, read or connect timeouts)',
    'upstream_5xx': 'an upstream service failing or overloaded (5xx with a retry sense: 503, 504, overloaded)',
    'db_contention': 'concurrent transactions colliding (deadlocks, lock waits, serialisation failures)',
    'llm_model': 'a model name that does not exist or that the key cannot use',
    'llm_request': 'a request the model API rejects as too long or malformed',
    'dependency_conflict': 'requirements that cannot all hold at once, or a malformed requirement',
    'deploy_setup': 'a deployment tool refusing its setup (a release name taken, a chart it cannot use)',
    'missing_dependency': 'a package, module or command that is not installed',
    'permission': 'file-system or OS permission refused for an operation (EACCES, permission denied)',
    'missing_resource': 'a provisioned resource that does not exist (bucket, table, queue, topic, namespace, unit)',
    'missing_config': 'configuration missing or invalid (environment variables, config files, schema or model names)',
    'missing_data': 'a file, key or object the program asked for that does not exist (ENOENT, NoSuchKey, 404 on a key)',
    'build_error': 'code or templates that do not compile or render (syntax and type errors, lockfiles out of step)',
    'orm_session': 'ORM objects used outside the session that loaded them (detached, lazy load)',
    'http_client_error': 'requests the service refuses as malformed or not applicable (HTTP 4xx validation)',
    'code_exception': "programming errors in the agent's own code (KeyError, TypeError, null dereferences)",
}

# name -> (positives, near misses)
RULE_EXAMPLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    'app_boot_failure': (
        (
            'Error R10 (Boot timeout) -> Web process failed to bind to $PORT within 60 seconds of '
            'launch',
            'at=error code=H20 desc="App boot timeout" method=GET path="/" '
            'host=acme-web-prod.herokuapp.com request_id=2a1f9c3e fwd="81.2.69.160" dyno= connect= '
            'service= status=503 bytes=',
        ),
        (
            'at=error code=H10 desc="App crashed" method=GET path="/" host=acme-api.herokuapp.com '
            'request_id=9a1c2e3f fwd="203.0.113.9" dyno= connect= service= status=503 bytes=',
        ),
    ),
    'own_import_error': (
        (
            "ImportError: cannot import name 'normalize_email' from 'acme.users.utils' "
            '(/app/acme/users/utils.py)',
            "ImportError: cannot import name 'Order' from partially initialized module 'shop.models' "
            '(most likely due to a circular import) (/srv/shop/models/__init__.py)',
        ),
        (
            'java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is '
            'null\n\tat com.acme.users.UserService.normalize(UserService.java:88)\n\tat '
            'com.acme.users.UserController.create(UserController.java:41)',
        ),
    ),
    'datastore_capacity': (
        (
            'ERR max number of clients reached',
            'FATAL: sorry, too many clients already',
        ),
        (
            'OSError: [Errno 24] Too many open files',
        ),
    ),
    'pool_exhausted': (
        (
            'sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, connection '
            'timed out, timeout 30.00',
            '[error] GenServer #PID<0.1834.0> terminating\n** (DBConnection.ConnectionError) connection '
            'not available and request was dropped from queue after 1342ms.',
        ),
        (
            'java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, '
            'request timed out after 30000ms.',
        ),
    ),
    'service_sealed_or_crashed': (
        (
            'hvac.exceptions.VaultDown: Vault is sealed, on get '
            'https://vault.prod.acme.net:8200/v1/auth/token/lookup-self',
            'Error making API request.\n\nURL: GET https://vault.internal:8200/v1/secret/data/app/prod\nCo'
            'de: 503. Errors:\n\n* Vault is sealed',
        ),
        (
            'Error making API request.\n\nURL: GET https://vault.internal:8200/v1/secret/data/payments/st'
            'ripe\nCode: 403. Errors:\n\n* permission denied',
        ),
    ),
    'billing': (
        (
            'billing API answered HTTP 402 Payment Required',
            'Error: 429 You exceeded your current quota, please check your plan and billing details.',
        ),
        (
            'Error R14 (Memory quota exceeded) -- web.2 using 1094M of 512M',
        ),
    ),
    'message_too_large': (
        (
            'nats: maximum payload exceeded',
            'KafkaError{code=MSG_SIZE_TOO_LARGE,val=10,str="Broker: Message size too large"}',
        ),
        (
            'KafkaError{code=TOPIC_AUTHORIZATION_FAILED,val=29,str="Broker: Topic authorization '
            'failed"}',
        ),
    ),
    'rate_limit': (
        (
            'Error: An API error occurred: ratelimited (Retry-After: 30)',
            'HTTP 403: API rate limit exceeded for installation ID 4412981.',
        ),
        (
            'HTTPError: 503 Server Error: Service Unavailable for url: '
            'https://api.geocodio.example/v1/geocode (Retry-After: 60)',
        ),
    ),
    'datastore_failover': (
        (
            'etcdserver: leader changed',
            'CLUSTERDOWN The cluster is down',
        ),
        (
            'pyproject.toml changed significantly since poetry.lock was last generated. Run `poetry '
            'lock [--no-update]` to fix the lock file.',
        ),
    ),
    'auth': (
        (
            'Host key verification failed.',
            'nats: Authorization Violation',
        ),
        (
            'sqlite3.IntegrityError: FOREIGN KEY constraint failed',
        ),
    ),
    'tls_transport_dropped': (
        (
            'error: failed to get `serde_json` as a dependency of package `ingest v0.3.0 '
            '(/build/ingest)`\nCaused by:\n  download of se/rd/serde_json failed\nCaused by:\n  [35] SSL '
            'connect error (OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to '
            'index.crates.io:443 )',
        ),
        (
            'Readiness probe failed: Get "http://10.42.3.17:8080/healthz": dial tcp 10.42.3.17:8080: '
            'connect: connection refused',
        ),
    ),
    'tls': (
        (
            'SSL_CTX_use_PrivateKey_file:key values mismatch',
            'ssl.SSLError: [SSL: CA_MD_TOO_WEAK] ca md too weak (_ssl.c:4048)',
        ),
        (
            'fatal error: openssl/ssl.h: No such file or directory\n compilation terminated.',
        ),
    ),
    'dns': (
        (
            'could not resolve hostname api.internal',
            'could not resolve hostname billing.internal',
        ),
        (
            'ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: '
            "Hostname mismatch, certificate is not valid for 'api.internal'. (_ssl.c:1006)",
        ),
    ),
    'grpc_unavailable': (
        (
            'grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus '
            '= StatusCode.UNAVAILABLE',
            'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while '
            'dialing: dial tcp 10.4.1.9:50051: i/o timeout"',
        ),
        (
            'grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus '
            '= StatusCode.PERMISSION_DENIED',
        ),
    ),
    'connection_refused': (
        (
            'ConnectionRefusedError: localhost:8000',
            'ConnectionRefusedError: localhost:8080',
        ),
        (
            'fatal_error',
        ),
    ),
    'container_config': (
        (
            'Error: configmap "api-config" not found',
            'Error: configmap "worker-config" not found',
        ),
        (
            'Error from server (NotFound): pods "worker-5c8d7f9b4-q7m2n" not found',
        ),
    ),
    'port_in_use': (
        (
            'Error: listen EADDRINUSE: address already in use :::3000',
            'Error: listen EADDRINUSE: address already in use 0.0.0.0:8080',
        ),
        (
            '==18231==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000a10 at pc '
            '0x55d1c3e4b2f1 bp 0x7ffd1a2b3c40 sp 0x7ffd1a2b3c38\nREAD of size 4 at 0x602000000a10 '
            'thread T0\n    #0 0x55d1c3e4b2f0 in Buffer::size() const src/buffer.cpp:44',
        ),
    ),
    'resource_exhaustion': (
        (
            'java.lang.OutOfMemoryError: Metaspace',
            'OSError: [Errno 24] Too many open files',
        ),
        (
            'FATAL: sorry, too many clients already',
        ),
    ),
    'storage_attach': (
        (
            'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data '
            'kube-api-access-x8r2l]: timed out waiting for the condition',
            'AttachVolume.Attach failed for volume "pvc-3f6a9c21-8b4e-4d7a-9c1f-2e5b7a8d0c43" : rpc '
            'error: code = DeadlineExceeded desc = context deadline exceeded',
        ),
        (
            'rpc error: code = DeadlineExceeded desc = context deadline exceeded',
        ),
    ),
    'hardware_fault': (
        (
            'sqlite3.OperationalError: disk I/O error',
            'NVRM: Xid (PCI:0000:3b:00): 79, pid=41277, GPU has fallen off the bus.',
        ),
        (
            'sqlite3.OperationalError: near "FROM": syntax error',
        ),
    ),
    'ci_agent_lost': (
        (
            'Error: Job failed (system failure): Error response from daemon: Container 8c1a... is not '
            'running',
            "This job is stuck because you don't have any active runners online or available with any "
            'of these tags assigned to them: gpu-a100',
        ),
        (
            'docker: Error response from daemon: could not select device driver "" with capabilities: '
            '[[gpu]].',
        ),
    ),
    'broker_topic_missing': (
        (
            'org.apache.kafka.common.errors.TimeoutException: Topic orders-v2 not present in metadata '
            'after 60000 ms.',
        ),
        (
            'org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access '
            'topics: [orders.v1]',
        ),
    ),
    'package_lock_held': (
        (
            'E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 2314 '
            '(unattended-upgr)\nE: Unable to acquire the dpkg frontend lock '
            '(/var/lib/dpkg/lock-frontend), is another process using it?',
        ),
        (
            'The config profile (prod-admin) could not be found',
        ),
    ),
    'connection_reset': (
        (
            'BrokenPipeError: [Errno 32] Broken pipe',
            'kazoo.exceptions.ConnectionLoss: ((), {})',
        ),
        (
            'kombu.exceptions.OperationalError: [Errno 111] Connection refused',
        ),
    ),
    'timeout': (
        (
            'TimeoutError',
            'nats: timeout',
        ),
        (
            'nats: Authorization Violation',
        ),
    ),
    'upstream_5xx': (
        (
            'AxiosError: Request failed with status code 503',
            '451 4.3.0 Mail server temporarily rejected message.',
        ),
        (
            'Request failed with status code 500',
        ),
    ),
    'db_contention': (
        (
            'sqlite3.OperationalError: database is locked',
            'ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)',
        ),
        (
            'sqlite3.OperationalError: disk I/O error',
        ),
    ),
    'llm_model': (
        (
            'Error: model "qwen2.5-coder:14b" not found, try pulling it first',
            'Error: model "llama3.1:8b-instruct-q4_K_M" not found, try pulling it first',
        ),
        (
            'Error: configmap "api-config" not found',
        ),
    ),
    'llm_request': (
        (
            "anthropic.BadRequestError: Error code: 400 - {'type': 'error', 'error': {'type': "
            "'invalid_request_error', 'message': 'max_tokens: Field required'}}",
            "anthropic.BadRequestError: Error code: 400 - {'type': 'error', 'error': {'type': "
            "'invalid_request_error', 'message': 'tools.0.input_schema: JSON schema is invalid'}}",
        ),
        (
            "anthropic.AuthenticationError: Error code: 401 - {'type': 'error', 'error': {'type': "
            "'authentication_error', 'message': 'invalid x-api-key'}, 'request_id': "
            "'req_011CW1a2B3c4D5e6F7g8H9'}",
        ),
    ),
    'dependency_conflict': (
        (
            'ERROR: Invalid requirement: \'flask>=2.0;python_version>"3.7\' (from line 9 of '
            'requirements.txt)',
            'ERROR: Invalid requirement: \'requests>=2.0,<3.0;python_version>"3.8\' (from line 3 of '
            'requirements.txt)',
        ),
        (
            'ERROR: Could not find a version that satisfies the requirement torch==2.9.1+cu118 (from '
            'versions: 2.5.0, 2.5.1)',
        ),
    ),
    'deploy_setup': (
        (
            'Error: INSTALLATION FAILED: repo bitnami not found',
            'Error: INSTALLATION FAILED: repo prometheus-community not found',
        ),
        (
            'Warning  Failed  12s (x4 over 48s)  kubelet  Error: secret "db-credentials" not found',
        ),
    ),
    'missing_dependency': (
        (
            '/bin/sh: 1: jq: not found',
            '/bin/sh: 4: jq: not found',
        ),
        (
            'HTTP 404 Not Found: /api/v2/widgets/8812',
        ),
    ),
    'permission': (
        (
            'bash: ./deploy.sh: Permission denied',
            'bash: ./scripts/deploy.sh: Permission denied',
        ),
        (
            "subprocess.CalledProcessError: Command '['bash', '-c', './deploy.sh']' returned non-zero "
            'exit status 2.',
        ),
    ),
    'missing_resource': (
        (
            'Failed to start nginx.service: Unit nginx.service not found.',
            'Failed to start gunicorn.service: Unit gunicorn.service not found.',
        ),
        (
            'Error: INSTALLATION FAILED: repo bitnami not found',
        ),
    ),
    'missing_config': (
        (
            "KeyError: 'DATABASE_URL'",
            "KeyError: 'OPENAI_API_KEY'",
        ),
        (
            "Error: couldn't find key DATABASE_URL in Secret prod/api-env",
        ),
    ),
    'missing_data': (
        (
            'HTTP 404 Not Found: /api/v2/widgets/8812',
            'HTTP 404 Not Found: /api/v2/widgets/9001',
        ),
        (
            'Error: configmap "api-config" not found',
        ),
    ),
    'build_error': (
        (
            './pricing.go:58:1: missing return',
            'Error: Missing helper: "formatDate"',
        ),
        (
            'Error: Missing required environment variable: SENTRY_DSN',
        ),
    ),
    'orm_session': (
        (
            'sqlalchemy.orm.exc.DetachedInstanceError: Parent instance <Order at 0x7f3a2c1d9e50> is '
            "not bound to a Session; lazy load operation of attribute 'items' cannot proceed",
        ),
        (
            'sqlalchemy.exc.IntegrityError: (psycopg2.errors.ForeignKeyViolation) insert or update on '
            'table "order_items" violates foreign key constraint "order_items_order_id_fkey"\nDETAIL:  '
            'Key (order_id)=(88123) is not present in table "orders".',
        ),
    ),
    'http_client_error': (
        (
            'HTTP Error 410: Gone',
            '414 Request-URI Too Large',
        ),
        (
            'HTTP 425 Too Early',
        ),
    ),
    'code_exception': (
        (
            "KeyError: 'tried_actions'",
            "KeyError: 'shipping_address'",
        ),
        (
            'Error: listen EADDRINUSE: address already in use :::3000',
        ),
    ),
}

CUE_EXAMPLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    'grpc-status/UNAVAILABLE': (
        (
            'rpc error: code = Unavailable desc = etcdserver: leader changed',
        ),
        (
            'rpc error: code = ResourceExhausted desc = etcdserver: mvcc: database space exceeded',
        ),
    ),
    'grpc-status/DEADLINE_EXCEEDED': (
        (
            'rpc error: code = DeadlineExceeded desc = context deadline exceeded',
        ),
        (
            'rpc error: code = ResourceExhausted desc = etcdserver: mvcc: database space exceeded',
        ),
    ),
    'grpc-status/RESOURCE_EXHAUSTED': (
        (
            'rpc error: code = ResourceExhausted desc = etcdserver: mvcc: database space exceeded',
        ),
        (
            'rpc error: code = Unavailable desc = etcdserver: leader changed',
        ),
    ),
    'grpc-status/ABORTED': (
        (
            'rpc error: code = Aborted desc = transaction was aborted by a concurrent write',
        ),
        (
            'rpc error: code = Unavailable desc = etcdserver: leader changed',
        ),
    ),
    'grpc-status/PERMISSION_DENIED': (
        (
            'grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus '
            '= StatusCode.PERMISSION_DENIED',
        ),
        (
            'grpc._channel._InactiveRpcError: status = StatusCode.DATA_LOSS, details = "chunk checksum '
            'mismatch"',
        ),
    ),
    'grpc-status/UNAUTHENTICATED': (
        (
            'rpc error: code = Unauthenticated desc = transport: per-RPC creds failed due to error: '
            'oauth2: cannot fetch token: 401 Unauthorized',
        ),
        (
            'rpc error: code = OutOfRange desc = page token beyond the end of the result set',
        ),
    ),
    'grpc-status/INVALID_ARGUMENT': (
        (
            'rpc error: code = InvalidArgument desc = invalid field mask path "spec.replicas_count"',
        ),
        (
            'rpc error: code = Unavailable desc = etcdserver: leader changed',
        ),
    ),
    'grpc-status/FAILED_PRECONDITION': (
        (
            'rpc error: code = FailedPrecondition desc = cluster is not in a RUNNING state',
        ),
        (
            'rpc error: code = NotFound desc = order ord_8812 not found',
        ),
    ),
    'grpc-status/NOT_FOUND': (
        (
            'rpc error: code = NotFound desc = order ord_8812 not found',
        ),
        (
            'rpc error: code = FailedPrecondition desc = cluster is not in a RUNNING state',
        ),
    ),
    'grpc-status/UNIMPLEMENTED': (
        (
            'rpc error: code = Unimplemented desc = unknown method ListInvoices for service '
            'billing.v2.Billing',
        ),
        (
            'rpc error: code = Unavailable desc = etcdserver: leader changed',
        ),
    ),
    'grpc-status/ALREADY_EXISTS': (
        (
            "rpc error: code = AlreadyExists desc = customer with external_id 'crm-4412' already exists",
        ),
        (
            'rpc error: code = Unavailable desc = etcdserver: leader changed',
        ),
    ),
    'grpc-status/OUT_OF_RANGE': (
        (
            'rpc error: code = OutOfRange desc = page token beyond the end of the result set',
        ),
        (
            'rpc error: code = Unavailable desc = etcdserver: leader changed',
        ),
    ),
    'grpc-status/DATA_LOSS': (
        (
            'grpc._channel._InactiveRpcError: status = StatusCode.DATA_LOSS, details = "chunk checksum '
            'mismatch"',
        ),
        (
            'grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus '
            '= StatusCode.PERMISSION_DENIED',
        ),
    ),
    'http-status/429': (
        (
            'HTTP 429 Too Many Requests: rate limit exceeded, retry after 3s',
        ),
        (
            'HTTP 403: API rate limit exceeded for installation ID 4412981.',
        ),
    ),
    'http-status/500': (
        (
            '500 Internal Server Error',
        ),
        (
            'HTTP Error 410: Gone',
        ),
    ),
    'http-status/502': (
        (
            '502 Bad Gateway\nnginx/1.25.3',
        ),
        (
            "504 Gateway Time-out\nThe server didn't respond in time. (nginx/1.24.0)",
        ),
    ),
    'http-status/503': (
        (
            'AxiosError: Request failed with status code 503',
        ),
        (
            'axios: Request failed with status code 415',
        ),
    ),
    'http-status/504': (
        (
            "504 Gateway Time-out\nThe server didn't respond in time. (nginx/1.24.0)",
        ),
        (
            '502 Bad Gateway\nnginx/1.25.3',
        ),
    ),
    'http-status/400': (
        (
            "BadRequestError(400, 'parsing_exception', 'unknown query [match_phrse]')",
        ),
        (
            'HTTP 428 Precondition Required: this request is required to be conditional; try using '
            'If-Match',
        ),
    ),
    'http-status/401': (
        (
            'HTTP 401 Unauthorized: invalid api key',
        ),
        (
            'HTTP 404 Not Found: /api/v2/widgets/8812',
        ),
    ),
    'http-status/403': (
        (
            'HTTP 403: API rate limit exceeded for installation ID 4412981.',
        ),
        (
            'HTTP 429 Too Many Requests: rate limit exceeded, retry after 3s',
        ),
    ),
    'http-status/404': (
        (
            'HTTP 404 Not Found: /api/v2/widgets/8812',
        ),
        (
            'HTTP 401 Unauthorized: invalid api key',
        ),
    ),
    'http-status/405': (
        (
            '405 Method Not Allowed: The method is not allowed for the requested URL.',
        ),
        (
            'HTTPError: 405 Client Error: Method Not Allowed for url: https://cms.acme.io/api/pages/42',
        ),
    ),
    'http-status/406': (
        (
            '406 Not Acceptable: the server cannot produce a response matching the list of acceptable '
            "values defined in the request's proactive content negotiation headers",
        ),
        (
            'proxy closed the request: HTTP 408 Request Timeout',
        ),
    ),
    'http-status/410': (
        (
            'HTTP Error 410: Gone',
        ),
        (
            'HTTP 425 Too Early',
        ),
    ),
    'http-status/412': (
        (
            'HTTP/1.1 412 Precondition Failed',
        ),
        (
            'websocket upgrade failed: HTTP 426 Upgrade Required',
        ),
    ),
    'http-status/415': (
        (
            'axios: Request failed with status code 415',
        ),
        (
            'Error: Request failed with status code 422',
        ),
    ),
    'http-status/428': (
        (
            'HTTP 428 Precondition Required: this request is required to be conditional; try using '
            'If-Match',
        ),
        (
            'HTTP 409 Conflict: {"error":"idempotency_key_in_use","message":"There is currently '
            'another in-progress request using this Idempotency Key"}',
        ),
    ),
    'http-status/4xx Client Error': (
        (
            'HTTPError: 405 Client Error: Method Not Allowed for url: https://cms.acme.io/api/pages/42',
        ),
        (
            '405 Method Not Allowed: The method is not allowed for the requested URL.',
        ),
    ),
    'http-status/5xx Server Error': (
        (
            'HTTP 524: A timeout occurred (Cloudflare Ray ID: 84b1c2d3e4f5a6b7)',
        ),
        (
            'proxy closed the request: HTTP 408 Request Timeout',
        ),
    ),
    'http-status/521/523': (
        (
            'upstream request failed: HTTP 521 Web Server Is Down',
        ),
        (
            'HTTP/1.1 412 Precondition Failed',
        ),
    ),
    'http-status/525/526': (
        (
            'GET https://shop.example.com/ returned 525 SSL Handshake Failed',
        ),
        (
            'GET /search failed: HTTP 414 URI Too Long',
        ),
    ),
    'http-status/426': (
        (
            'websocket upgrade failed: HTTP 426 Upgrade Required',
        ),
        (
            'HTTP/1.1 411 Length Required',
        ),
    ),
    'http-status/409': (
        (
            'HTTP 409 Conflict: {"error":"idempotency_key_in_use","message":"There is currently '
            'another in-progress request using this Idempotency Key"}',
        ),
        (
            'HTTP 428 Precondition Required: this request is required to be conditional; try using '
            'If-Match',
        ),
    ),
    'http-status/413': (
        (
            '413 Request Entity Too Large\nnginx/1.25.3',
        ),
        (
            'gateway rejected the call: HTTP 431 Request Header Fields Too Large',
        ),
    ),
    'http-status/422': (
        (
            'Error: Request failed with status code 422',
        ),
        (
            'axios: Request failed with status code 415',
        ),
    ),
    'http-status/402': (
        (
            'billing API answered HTTP 402 Payment Required',
        ),
        (
            'HTTP/1.1 411 Length Required',
        ),
    ),
    'http-status/407': (
        (
            'curl: (56) CONNECT tunnel failed, response 407',
        ),
        (
            'HTTP/1.1 412 Precondition Failed',
        ),
    ),
    'http-status/408': (
        (
            'proxy closed the request: HTTP 408 Request Timeout',
        ),
        (
            'gateway rejected the call: HTTP 431 Request Header Fields Too Large',
        ),
    ),
    'http-status/411': (
        (
            'HTTP/1.1 411 Length Required',
        ),
        (
            'websocket upgrade failed: HTTP 426 Upgrade Required',
        ),
    ),
    'http-status/414': (
        (
            'GET /search failed: HTTP 414 URI Too Long',
        ),
        (
            'HTTP 425 Too Early',
        ),
    ),
    'http-status/416': (
        (
            'resume download failed: HTTP 416 Range Not Satisfiable',
        ),
        (
            'HTTP/1.1 412 Precondition Failed',
        ),
    ),
    'http-status/423': (
        (
            'WebDAV PUT /docs/plan.odt: HTTP 423 Locked',
        ),
        (
            'HTTP 425 Too Early',
        ),
    ),
    'http-status/425': (
        (
            'HTTP 425 Too Early',
        ),
        (
            'GET /search failed: HTTP 414 URI Too Long',
        ),
    ),
    'http-status/431': (
        (
            'gateway rejected the call: HTTP 431 Request Header Fields Too Large',
        ),
        (
            '413 Request Entity Too Large\nnginx/1.25.3',
        ),
    ),
    'http-status/501': (
        (
            'PATCH /v1/items/7: HTTP 501 Not Implemented',
        ),
        (
            'HTTP 404 Not Found: /api/v2/widgets/8812',
        ),
    ),
    'http-status/505': (
        (
            'legacy client: HTTP 505 HTTP Version Not Supported',
        ),
        (
            'HTTP 404 Not Found: /api/v2/widgets/8812',
        ),
    ),
    'http-status/507': (
        (
            'upload to the share failed: HTTP 507 Insufficient Storage',
        ),
        (
            'HTTP/1.1 412 Precondition Failed',
        ),
    ),
    'http-status/511': (
        (
            'captive portal: HTTP 511 Network Authentication Required',
        ),
        (
            'HTTP/1.1 411 Length Required',
        ),
    ),
    'orchestrator-state/ImagePullBackOff': (
        (
            'Back-off pulling image "ghcr.io/acme/ingest:2.14.0" (ImagePullBackOff)',
        ),
        (
            'container exited with code 137 (OOMKilled)',
        ),
    ),
    'orchestrator-state/CreateContainerConfigError': (
        (
            "Error: couldn't find key DATABASE_URL in ConfigMap prod/api-env "
            '(CreateContainerConfigError)',
        ),
        (
            'Warning  NodeNotReady  pod/api-6c8f9d7b4-xk2lp  Node is not ready',
        ),
    ),
    'orchestrator-state/OOMKilled': (
        (
            'container exited with code 137 (OOMKilled)',
        ),
        (
            'Warning  FailedCreatePodSandBox  kubelet  Failed to create pod sandbox: rpc error: code = '
            'Unknown desc = failed to setup network for sandbox "4b1c9e": plugin type="aws-cni" '
            'name="aws-cni" failed (add): add cmd: failed to assign an IP address to container',
        ),
    ),
    'orchestrator-state/Evicted': (
        (
            'Warning  Evicted  node ip-10-0-3-7 reported NodeHasDiskPressure',
        ),
        (
            'Warning  NodeNotReady  pod/api-6c8f9d7b4-xk2lp  Node is not ready',
        ),
    ),
    'orchestrator-state/Unschedulable': (
        (
            'Warning  FailedScheduling  default-scheduler  0/6 nodes are available: 2 node(s) had '
            'untolerated taint {node.kubernetes.io/unreachable: }, 4 Insufficient nvidia.com/gpu.',
        ),
        (
            'pod/etl-run is Pending: 0/5 nodes are available: 5 Insufficient cpu',
        ),
    ),
    'orchestrator-state/Insufficient': (
        (
            'pod/etl-run is Pending: 0/5 nodes are available: 5 Insufficient cpu',
        ),
        (
            'Warning  NodeNotReady  pod/api-6c8f9d7b4-xk2lp  Node is not ready',
        ),
    ),
    'orchestrator-state/NodeNotReady': (
        (
            'Warning  NodeNotReady  pod/api-6c8f9d7b4-xk2lp  Node is not ready',
        ),
        (
            'Warning  Evicted  node ip-10-0-3-7 reported NodeHasDiskPressure',
        ),
    ),
    'orchestrator-state/Pending': (
        (
            'pod/etl-run is Pending: 0/5 nodes are available: 5 Insufficient cpu',
        ),
        (
            'Warning  FailedScheduling  default-scheduler  0/6 nodes are available: 2 node(s) had '
            'untolerated taint {node.kubernetes.io/unreachable: }, 4 Insufficient nvidia.com/gpu.',
        ),
    ),
    'orchestrator-state/FailedMount': (
        (
            'Warning  FailedMount  12s (x9 over 4m)  kubelet  MountVolume.MountDevice failed for '
            'volume "pvc-3b1f9e2a-77c1-4a0e-9f21-c1d0b5e6a7f8" : rpc error: code = DeadlineExceeded '
            'desc = context deadline exceeded',
        ),
        (
            'Warning  FailedCreatePodSandBox  kubelet  Failed to create pod sandbox: rpc error: code = '
            'Unknown desc = failed to setup network for sandbox "4b1c9e": plugin type="aws-cni" '
            'name="aws-cni" failed (add): add cmd: failed to assign an IP address to container',
        ),
    ),
    'orchestrator-state/FailedCreatePodSandBox': (
        (
            'Warning  FailedCreatePodSandBox  kubelet  Failed to create pod sandbox: rpc error: code = '
            'Unknown desc = failed to setup network for sandbox "4b1c9e": plugin type="aws-cni" '
            'name="aws-cni" failed (add): add cmd: failed to assign an IP address to container',
        ),
        (
            'Warning  FailedMount  12s (x9 over 4m)  kubelet  MountVolume.MountDevice failed for '
            'volume "pvc-3b1f9e2a-77c1-4a0e-9f21-c1d0b5e6a7f8" : rpc error: code = DeadlineExceeded '
            'desc = context deadline exceeded',
        ),
    ),
    'orchestrator-state/OutOfResource': (
        (
            'Warning  Evicted  node ip-10-0-3-7 reported NodeHasDiskPressure',
        ),
        (
            'Warning  NodeNotReady  pod/api-6c8f9d7b4-xk2lp  Node is not ready',
        ),
    ),
    'orchestrator-state/exceeded quota': (
        (
            'Error creating: pods "worker-6c9f7d-" is forbidden: exceeded quota: team-ml-quota, '
            'requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: '
            'requests.nvidia.com/gpu=4',
        ),
        (
            'Warning  FailedScheduling  default-scheduler  0/6 nodes are available: 2 node(s) had '
            'untolerated taint {node.kubernetes.io/unreachable: }, 4 Insufficient nvidia.com/gpu.',
        ),
    ),
    'datastore-state/LOADING': (
        (
            'ReplyError: LOADING Redis is loading the dataset in memory',
        ),
        (
            "redis.exceptions.ResponseError: OOM command not allowed when used memory > 'maxmemory'.",
        ),
    ),
    'datastore-state/TRYAGAIN': (
        (
            'CLUSTERDOWN The cluster is down',
        ),
        (
            'ReplyError: LOADING Redis is loading the dataset in memory',
        ),
    ),
    'datastore-state/READONLY': (
        (
            "READONLY You can't write against a read only replica.",
        ),
        (
            'write refused: replica is lagging behind the primary by 48 s',
        ),
    ),
    'datastore-state/OOM command': (
        (
            "redis.exceptions.ResponseError: OOM command not allowed when used memory > 'maxmemory'.",
        ),
        (
            'ReplyError: LOADING Redis is loading the dataset in memory',
        ),
    ),
    'datastore-state/not leader': (
        (
            "MongoServerError: not primary (code: 10107, codeName: 'NotWritablePrimary')",
        ),
        (
            'write refused: replica is lagging behind the primary by 48 s',
        ),
    ),
    'datastore-state/leader election': (
        (
            'etcdserver: leader changed',
        ),
        (
            'CLUSTERDOWN The cluster is down',
        ),
    ),
    'datastore-state/NOT_ENOUGH_REPLICAS': (
        (
            'org.apache.kafka.common.errors.NotEnoughReplicasException: Messages are rejected since '
            'there are fewer in-sync replicas than required.',
        ),
        (
            'etcdserver: leader changed',
        ),
    ),
    'datastore-state/replica lag': (
        (
            'write refused: replica is lagging behind the primary by 48 s',
        ),
        (
            "READONLY You can't write against a read only replica.",
        ),
    ),
    'datastore-state/starting up': (
        (
            'FATAL: the database system is starting up (SQLSTATE 57P03)',
        ),
        (
            'CLUSTERDOWN The cluster is down',
        ),
    ),
    'datastore-state/cluster red': (
        (
            'search unavailable: cluster health is red (3 unassigned primary shards)',
        ),
        (
            'CLUSTERDOWN The cluster is down',
        ),
    ),
    'datastore-state/no quorum': (
        (
            'raft: cannot commit entry, no quorum among 2 of 5 voters',
        ),
        (
            'etcdserver: leader changed',
        ),
    ),
    'certificate/x509': (
        (
            'x509: certificate is valid for *.acme-cdn.net, acme-cdn.net, not api.acme.io',
        ),
        (
            'ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: '
            "Hostname mismatch, certificate is not valid for 'api.internal'. (_ssl.c:1006)",
        ),
    ),
    'certificate/expired': (
        (
            'Error: certificate has expired\n    at TLSSocket.onConnectSecure (node:_tls_wrap:1674:34)',
        ),
        (
            'curl: (60) SSL certificate problem: self-signed certificate in certificate chain',
        ),
    ),
    'certificate/unknown authority': (
        (
            'curl: (60) SSL certificate problem: self-signed certificate in certificate chain',
        ),
        (
            'ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: '
            "Hostname mismatch, certificate is not valid for 'api.internal'. (_ssl.c:1006)",
        ),
    ),
    'certificate/verify failed': (
        (
            'ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: '
            "Hostname mismatch, certificate is not valid for 'api.internal'. (_ssl.c:1006)",
        ),
        (
            'x509: certificate is valid for *.acme-cdn.net, acme-cdn.net, not api.acme.io',
        ),
    ),
    'certificate/hostname mismatch': (
        (
            'ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: '
            "Hostname mismatch, certificate is not valid for 'api.internal'. (_ssl.c:1006)",
        ),
        (
            'x509: certificate is valid for *.acme-cdn.net, acme-cdn.net, not api.acme.io',
        ),
    ),
    'certificate/handshake': (
        (
            'GET https://shop.example.com/ returned 525 SSL Handshake Failed',
        ),
        (
            'ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: '
            "Hostname mismatch, certificate is not valid for 'api.internal'. (_ssl.c:1006)",
        ),
    ),
    'compiler/undefined variable': (
        (
            "NoMethodError: undefined method `each' for nil:NilClass",
        ),
        (
            "ReplyError: ERR wrong number of arguments for 'hset' command",
        ),
    ),
    'compiler/unexpected token': (
        (
            "deploy.sh: line 41: syntax error near unexpected token `fi'",
        ),
        (
            "jinja2.exceptions.TemplateSyntaxError: unexpected '}'\n  line 14",
        ),
    ),
    'compiler/cannot find symbol': (
        (
            'e: /build/src/main/kotlin/Api.kt: (42, 17): Unresolved reference: retryPolicy',
        ),
        (
            'error[E0382]: borrow of moved value: `cfg`\n  --> src/main.rs:27:20',
        ),
    ),
    'compiler/not assignable': (
        (
            'Billing.java:31: error: incompatible types: possible lossy conversion from double to int',
        ),
        (
            'error[E0308]: mismatched types\n --> src/lib.rs:18:20',
        ),
    ),
    'compiler/error code': (
        (
            'error[E0308]: mismatched types\n --> src/lib.rs:18:20',
        ),
        (
            'Billing.java:31: error: incompatible types: possible lossy conversion from double to int',
        ),
    ),
    'compiler/template': (
        (
            "jinja2.exceptions.TemplateSyntaxError: unexpected '}'\n  line 14",
        ),
        (
            "deploy.sh: line 41: syntax error near unexpected token `fi'",
        ),
    ),
    'compiler/has no attribute': (
        (
            "NoMethodError: undefined method `each' for nil:NilClass",
        ),
        (
            "ReplyError: ERR wrong number of arguments for 'hset' command",
        ),
    ),
    'compiler/borrow checker': (
        (
            'error[E0382]: borrow of moved value: `cfg`\n  --> src/main.rs:27:20',
        ),
        (
            'error[E0308]: mismatched types\n --> src/lib.rs:18:20',
        ),
    ),
    'compiler/wrong arguments': (
        (
            "ReplyError: ERR wrong number of arguments for 'hset' command",
        ),
        (
            "NoMethodError: undefined method `each' for nil:NilClass",
        ),
    ),
    'errno/refused': (
        (
            'npm ERR! code ENOTFOUND\nnpm ERR! syscall getaddrinfo',
        ),
        (
            'sendto failed: ENETDOWN',
        ),
    ),
    'errno/reset': (
        (
            'BrokenPipeError: [Errno 32] Broken pipe',
        ),
        (
            'OSError: [Errno 24] Too many open files',
        ),
    ),
    'errno/no space': (
        (
            'OSError: [Errno 24] Too many open files',
        ),
        (
            "OSError: [Errno 30] Read-only file system: '/app/output/report.csv'",
        ),
    ),
    'errno/access': (
        (
            "OSError: [Errno 30] Read-only file system: '/app/output/report.csv'",
        ),
        (
            'OSError: [Errno 24] Too many open files',
        ),
    ),
    'errno/host down': (
        (
            'sendto failed: ENETDOWN',
        ),
        (
            'socket write failed: ENOTCONN',
        ),
    ),
    'errno/not connected': (
        (
            'socket write failed: ENOTCONN',
        ),
        (
            'sendto failed: ENETDOWN',
        ),
    ),
    'errno/address in use': (
        (
            'Error: listen EADDRINUSE: address already in use :::3000',
        ),
        (
            'exec /usr/local/bin/entrypoint.sh: exec format error',
        ),
    ),
    'errno/not implemented here': (
        (
            'fallocate on this file system failed: ENOTSUP',
        ),
        (
            "OSError: [Errno 30] Read-only file system: '/app/output/report.csv'",
        ),
    ),
    'errno/bad message': (
        (
            'rename across devices failed: EXDEV',
        ),
        (
            'sendto failed: ENETDOWN',
        ),
    ),
    'errno/lock': (
        (
            'cannot replace the running binary: ETXTBSY',
        ),
        (
            'flock on the NFS share failed: ENOLCK',
        ),
    ),
    'errno/no locks': (
        (
            'flock on the NFS share failed: ENOLCK',
        ),
        (
            'sendto failed: ENETDOWN',
        ),
    ),
    'errno/exec format': (
        (
            'exec /usr/local/bin/entrypoint.sh: exec format error',
        ),
        (
            'Error: listen EADDRINUSE: address already in use :::3000',
        ),
    ),
    'errno/bad call': (
        (
            'mkdir /data/out failed: EEXIST',
        ),
        (
            'sendto failed: ENETDOWN',
        ),
    ),
    'errno/process limit': (
        (
            'bash: fork: retry: Resource temporarily unavailable',
        ),
        (
            'sendto failed: ENETDOWN',
        ),
    ),
    'signal/killed': (
        (
            'Last State: Terminated, Reason: OOMKilled, Exit Code: 137',
        ),
        (
            'job step failed with exit code 127',
        ),
    ),
    'signal/segfault': (
        (
            'Segmentation fault (core dumped)',
        ),
        (
            'producer terminated by SIGPIPE',
        ),
    ),
    'signal/arithmetic trap': (
        (
            'worker died: Floating point exception (core dumped)',
        ),
        (
            'Segmentation fault (core dumped)',
        ),
    ),
    'signal/illegal instruction': (
        (
            'python3 exited: Illegal instruction (core dumped)',
        ),
        (
            'Segmentation fault (core dumped)',
        ),
    ),
    'signal/resource limit signal': (
        (
            'encoder killed: CPU time limit exceeded',
        ),
        (
            'producer terminated by SIGPIPE',
        ),
    ),
    'signal/broken pipe': (
        (
            'producer terminated by SIGPIPE',
        ),
        (
            'Last State: Terminated, Reason: OOMKilled, Exit Code: 137',
        ),
    ),
    'signal/not executable': (
        (
            'job step failed with exit code 127',
        ),
        (
            'Last State: Terminated, Reason: OOMKilled, Exit Code: 137',
        ),
    ),
    'signal/systemd setup': (
        (
            'worker.service: Main process exited, code=exited, status=203/EXEC',
        ),
        (
            'job step failed with exit code 127',
        ),
    ),
    'sqlstate/40 rollback': (
        (
            'ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)',
        ),
        (
            'could not read block 118 in file base/16384/2619: SQLSTATE 58030',
        ),
    ),
    'sqlstate/55P03 lock': (
        (
            'ERROR:  canceling statement due to lock timeout (SQLSTATE 55P03) while running ALTER '
            'TABLE orders ADD COLUMN shipped_at timestamptz',
        ),
        (
            'ERROR: column o.shiped_at does not exist (SQLSTATE 42703)\nHINT:  Perhaps you meant to '
            'reference the column "o.shipped_at".',
        ),
    ),
    'sqlstate/57P0x shutdown': (
        (
            'FATAL: the database system is starting up (SQLSTATE 57P03)',
        ),
        (
            'connection to the warehouse refused (SQLSTATE 28P01)',
        ),
    ),
    'sqlstate/53 resources': (
        (
            'FATAL: sorry, too many clients already (SQLSTATE 53300)',
        ),
        (
            'FATAL: the database system is starting up (SQLSTATE 57P03)',
        ),
    ),
    'sqlstate/58 system': (
        (
            'could not read block 118 in file base/16384/2619: SQLSTATE 58030',
        ),
        (
            'ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)',
        ),
    ),
    'sqlstate/28 authorization': (
        (
            'connection to the warehouse refused (SQLSTATE 28P01)',
        ),
        (
            'FATAL: the database system is starting up (SQLSTATE 57P03)',
        ),
    ),
    'sqlstate/42501 privilege': (
        (
            'ERROR: permission denied for schema analytics (SQLSTATE 42501)',
        ),
        (
            'ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)',
        ),
    ),
    'sqlstate/3D/3F missing catalog': (
        (
            'query failed: relation does not exist, SQLSTATE 42P01',
        ),
        (
            'ERROR: column o.shiped_at does not exist (SQLSTATE 42703)\nHINT:  Perhaps you meant to '
            'reference the column "o.shipped_at".',
        ),
    ),
    'sqlstate/42 syntax': (
        (
            'ERROR: column o.shiped_at does not exist (SQLSTATE 42703)\nHINT:  Perhaps you meant to '
            'reference the column "o.shipped_at".',
        ),
        (
            'query failed: relation does not exist, SQLSTATE 42P01',
        ),
    ),
    'sqlstate/22/23 data': (
        (
            'ERROR: insert or update on table "order_items" violates foreign key constraint '
            '"order_items_order_id_fkey" (SQLSTATE 23503)',
        ),
        (
            'ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)',
        ),
    ),
    'sqlstate/25/0A state': (
        (
            'cannot run VACUUM inside a transaction block (SQLSTATE 25001)',
        ),
        (
            'could not read block 118 in file base/16384/2619: SQLSTATE 58030',
        ),
    ),
    'environment/env KeyError': (
        (
            "KeyError: 'DATABASE_URL'",
        ),
        (
            'startup failed: the database URL is malformed',
        ),
    ),
    'smtp-status/4.x.x': (
        (
            '451 4.3.0 Mail server temporarily rejected message.',
        ),
        (
            "smtplib.SMTPRecipientsRefused: {'ops@partner.example': (550, b'5.7.1 Unable to relay')}",
        ),
    ),
    'smtp-status/5.7.x': (
        (
            "smtplib.SMTPRecipientsRefused: {'ops@partner.example': (550, b'5.7.1 Unable to relay')}",
        ),
        (
            "smtplib.SMTPRecipientsRefused: {'ops@@acme.io': (501, b'5.1.3 Bad recipient address "
            "syntax')}",
        ),
    ),
    'smtp-status/5.1.x': (
        (
            "smtplib.SMTPRecipientsRefused: {'ops@@acme.io': (501, b'5.1.3 Bad recipient address "
            "syntax')}",
        ),
        (
            "smtplib.SMTPRecipientsRefused: {'ops@partner.example': (550, b'5.7.1 Unable to relay')}",
        ),
    ),
    'source-location/file:line error': (
        (
            './main.go:14:2: "os" imported and not used',
        ),
        (
            "NameError: name 'pd' is not defined",
        ),
    ),
    'source-location/not in scope': (
        (
            "NameError: name 'pd' is not defined",
        ),
        (
            'Error: execution error at (api/templates/secret.yaml:7:20): image.repository is required',
        ),
    ),
    'source-location/config line': (
        (
            'Error: execution error at (api/templates/secret.yaml:7:20): image.repository is required',
        ),
        (
            "NameError: name 'pd' is not defined",
        ),
    ),
    'class-name/Timeout': (
        (
            'TimeoutError',
        ),
        (
            "KeyError: 'DATABASE_URL'",
        ),
    ),
    'class-name/TimedOut': (
        (
            'Http::TimedOut: read from api.example.com took too long',
        ),
        (
            'java.net.UnknownHostException: db.internal.example.com',
        ),
    ),
    'class-name/Unavailable': (
        (
            'google.api_core.exceptions.ServiceUnavailable: 503 The service is currently unavailable.',
        ),
        (
            'google.api_core.exceptions.DeadlineExceeded: 504 Deadline Exceeded',
        ),
    ),
    'class-name/Throttl': (
        (
            'An error occurred (RequestThrottled) when calling the ReceiveMessage operation: Request '
            'is throttled.',
        ),
        (
            'botocore.exceptions.ClientError: An error occurred (RequestTimeTooSkewed) when calling '
            'the PutObject operation',
        ),
    ),
    'class-name/RateLimit': (
        (
            'stripe.error.RateLimitError: Request req_Lm3Q8wXa1: Too many requests made to the API too '
            'quickly',
        ),
        (
            'Stripe::InvalidRequestError: Invalid integer: 12.50 (Request req_Yc7Pq0)',
        ),
    ),
    'class-name/Deadline': (
        (
            'google.api_core.exceptions.DeadlineExceeded: 504 Deadline Exceeded',
        ),
        (
            'google.api_core.exceptions.ServiceUnavailable: 503 The service is currently unavailable.',
        ),
    ),
    'class-name/TryAgain': (
        (
            'java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, '
            'request timed out after 30000ms.',
        ),
        (
            'SubscriptionNotFound: The subscription could not be found for this request',
        ),
    ),
    'class-name/Busy': (
        (
            'redis.exceptions.BusyLoadingError: Redis is loading the dataset in memory',
        ),
        (
            'google.api_core.exceptions.ServiceUnavailable: 503 The service is currently unavailable.',
        ),
    ),
    'class-name/Deadlock': (
        (
            'psycopg2.errors.SerializationFailure: could not serialize access due to concurrent update',
        ),
        (
            'psycopg.errors.DiskFull: could not extend file "base/16384/2619": No space left on '
            'device\nHINT:  Check free disk space.',
        ),
    ),
    'class-name/ConnectionReset': (
        (
            'ConnectionResetError: [Errno 104] Connection reset by peer',
        ),
        (
            'BrokenPipeError: [Errno 32] Broken pipe',
        ),
    ),
    'class-name/BrokenPipe': (
        (
            'BrokenPipeError: [Errno 32] Broken pipe',
        ),
        (
            'Errno::EHOSTUNREACH NetworkUnreachableError: no route to 10.2.0.9',
        ),
    ),
    'class-name/ConnectionRefused': (
        (
            'ConnectionRefusedError: localhost:8000',
        ),
        (
            'TimeoutError',
        ),
    ),
    'class-name/HostUnreachable': (
        (
            'Errno::EHOSTUNREACH NetworkUnreachableError: no route to 10.2.0.9',
        ),
        (
            'BrokenPipeError: [Errno 32] Broken pipe',
        ),
    ),
    'class-name/OutOfMemory': (
        (
            'java.lang.OutOfMemoryError: Metaspace',
        ),
        (
            'Exception in thread "main" java.lang.NullPointerException: Cannot invoke '
            '"String.length()" because "name" is null',
        ),
    ),
    'class-name/NoSpace': (
        (
            'psycopg.errors.DiskFull: could not extend file "base/16384/2619": No space left on '
            'device\nHINT:  Check free disk space.',
        ),
        (
            'psycopg2.errors.SerializationFailure: could not serialize access due to concurrent update',
        ),
    ),
    'class-name/NotFound': (
        (
            "ModuleNotFoundError: No module named 'pandas'",
        ),
        (
            'TimeoutError',
        ),
    ),
    'class-name/Permission': (
        (
            'telegram.error.Forbidden: Forbidden: bot was blocked by the user',
        ),
        (
            'telegram.error.InvalidToken: Invalid token',
        ),
    ),
    'class-name/Credentials': (
        (
            'telegram.error.InvalidToken: Invalid token',
        ),
        (
            'telegram.error.Forbidden: Forbidden: bot was blocked by the user',
        ),
    ),
    'class-name/Config': (
        (
            "Error: couldn't find key DATABASE_URL in ConfigMap prod/api-env "
            '(CreateContainerConfigError)',
        ),
        (
            "KeyError: 'DATABASE_URL'",
        ),
    ),
    'class-name/Import': (
        (
            "ModuleNotFoundError: No module named 'pandas'",
        ),
        (
            'TimeoutError',
        ),
    ),
    'class-name/Version': (
        (
            'java.lang.UnsupportedClassVersionError: com/acme/orders/Main has been compiled by a more '
            'recent version of the Java Runtime (class file version 65.0), this version of the Java '
            'Runtime only recognizes class file versions up to 61.0',
        ),
        (
            'ResourceQuotaExceeded: the project has used all of its CPUs in this region',
        ),
    ),
    'class-name/VersionConflict': (
        (
            "elasticsearch.ConflictError: ConflictError(409, 'version_conflict_engine_exception', "
            "'[SKU-883]: version conflict, required seqNo [1021], primary term [3]. current document "
            "has seqNo [1022] and primary term [3]')",
        ),
        (
            'java.lang.UnsupportedClassVersionError: com/acme/orders/Main has been compiled by a more '
            'recent version of the Java Runtime (class file version 65.0), this version of the Java '
            'Runtime only recognizes class file versions up to 61.0',
        ),
    ),
    'class-name/ThroughputExceeded': (
        (
            'ProvisionedThroughputExceededException: The level of configured provisioned throughput '
            'for one or more global secondary indexes of the table was exceeded.',
        ),
        (
            'telegram.error.Forbidden: Forbidden: bot was blocked by the user',
        ),
    ),
    'class-name/Syntax': (
        (
            "jinja2.exceptions.TemplateSyntaxError: unexpected '}'\n  line 14",
        ),
        (
            'jinja2.exceptions.TemplateNotFound: emails/receipt.html',
        ),
    ),
    'class-name/Type': (
        (
            "TypeError: 'NoneType' object is not subscriptable",
        ),
        (
            "NameError: name 'pd' is not defined",
        ),
    ),
    'class-name/Value': (
        (
            "ValueError: invalid literal for int() with base 10: 'abc'",
        ),
        (
            'telegram.error.InvalidToken: Invalid token',
        ),
    ),
    'class-name/Invalid': (
        (
            'Stripe::InvalidRequestError: Invalid integer: 12.50 (Request req_Yc7Pq0)',
        ),
        (
            'stripe.error.RateLimitError: Request req_Lm3Q8wXa1: Too many requests made to the API too '
            'quickly',
        ),
    ),
    'class-name/Attribute': (
        (
            "NameError: name 'pd' is not defined",
        ),
        (
            'ReferenceError: userSession is not defined\n    at handler (/var/task/index.js:14:5)',
        ),
    ),
    'class-name/Reference': (
        (
            'ReferenceError: userSession is not defined\n    at handler (/var/task/index.js:14:5)',
        ),
        (
            "NameError: name 'pd' is not defined",
        ),
    ),
    'class-name/UnknownHost': (
        (
            'java.net.UnknownHostException: db.internal.example.com',
        ),
        (
            'Http::TimedOut: read from api.example.com took too long',
        ),
    ),
    'class-name/ConcurrentModification': (
        (
            'java.util.ConcurrentModificationException at OrderBook.rebalance',
        ),
        (
            'java.lang.OutOfMemoryError: Metaspace',
        ),
    ),
    'class-name/Key': (
        (
            "KeyError: 'DATABASE_URL'",
        ),
        (
            "Error: couldn't find key DATABASE_URL in ConfigMap prod/api-env "
            '(CreateContainerConfigError)',
        ),
    ),
    'class-name/Null': (
        (
            'Exception in thread "main" java.lang.NullPointerException: Cannot invoke '
            '"String.length()" because "name" is null',
        ),
        (
            'java.lang.OutOfMemoryError: Metaspace',
        ),
    ),
    'class-name/Arithmetic': (
        (
            'ZeroDivisionError: division by zero',
        ),
        (
            'TimeoutError',
        ),
    ),
    'class-name/Validation': (
        (
            'AssertionError: expected 200, got 500',
        ),
        (
            'TimeoutError',
        ),
    ),
    'class-name/Serialization': (
        (
            'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)',
        ),
        (
            'psycopg2.errors.AmbiguousColumn: column reference "id" is ambiguous\nLINE 1: SELECT id '
            'FROM orders JOIN customers USING (tenant_id)',
        ),
    ),
    'class-name/Script': (
        (
            'jinja2.exceptions.TemplateNotFound: emails/receipt.html',
        ),
        (
            'kazoo.exceptions.ConnectionLoss: ((), {})',
        ),
    ),
    'class-name/Recursion': (
        (
            'RecursionError: maximum recursion depth exceeded in comparison',
        ),
        (
            'google.api_core.exceptions.DeadlineExceeded: 504 Deadline Exceeded',
        ),
    ),
    'class-name/TooManyRequests': (
        (
            'SlowDown: Please reduce your request rate.\n\tstatus code: 503, request id: 7Q2M9XK1R0, '
            'host id: abc/def=',
        ),
        (
            'Stripe::InvalidRequestError: Invalid integer: 12.50 (Request req_Yc7Pq0)',
        ),
    ),
    'class-name/Connection': (
        (
            'kazoo.exceptions.ConnectionLoss: ((), {})',
        ),
        (
            "jinja2.exceptions.TemplateSyntaxError: unexpected '}'\n  line 14",
        ),
    ),
    'class-name/Capacity': (
        (
            'An error occurred (InsufficientInstanceCapacity) when calling the RunInstances operation '
            '(reached max retries: 4): We currently do not have sufficient g5.2xlarge capacity in the '
            'Availability Zone you requested (eu-west-1a).',
        ),
        (
            'An error occurred (RequestThrottled) when calling the ReceiveMessage operation: Request '
            'is throttled.',
        ),
    ),
    'class-name/Quota': (
        (
            'ResourceQuotaExceeded: the project has used all of its CPUs in this region',
        ),
        (
            'SubscriptionNotFound: The subscription could not be found for this request',
        ),
    ),
    'class-name/ClockSkew': (
        (
            'botocore.exceptions.ClientError: An error occurred (RequestTimeTooSkewed) when calling '
            'the PutObject operation',
        ),
        (
            'An error occurred (RequestThrottled) when calling the ReceiveMessage operation: Request '
            'is throttled.',
        ),
    ),
    'class-name/NotEnabled': (
        (
            'SubscriptionNotFound: The subscription could not be found for this request',
        ),
        (
            'ResourceQuotaExceeded: the project has used all of its CPUs in this region',
        ),
    ),
    'class-name/Region': (
        (
            'botocore.exceptions.NoRegionError: You must specify a region.',
        ),
        (
            'botocore.exceptions.ClientError: An error occurred (RequestTimeTooSkewed) when calling '
            'the PutObject operation',
        ),
    ),
    'class-name/TLS': (
        (
            'ssl.SSLError: [SSL: CA_MD_TOO_WEAK] ca md too weak (_ssl.c:4048)',
        ),
        (
            'Http::TimedOut: read from api.example.com took too long',
        ),
    ),
    'class-name/Disconnected': (
        (
            'kazoo.exceptions.ConnectionLoss: ((), {})',
        ),
        (
            "jinja2.exceptions.TemplateSyntaxError: unexpected '}'\n  line 14",
        ),
    ),
    'class-name/NoServers': (
        (
            'kafka.errors.NoBrokersAvailable: NoBrokersAvailable',
        ),
        (
            'org.apache.kafka.common.errors.RecordTooLargeException: The message is 2097230 bytes when '
            'serialized which is larger than 1048576, which is the value of the max.request.size '
            'configuration.',
        ),
    ),
    'class-name/Unrecognized': (
        (
            'com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException: Unrecognized field '
            '"customer_id" (class com.acme.orders.dto.OrderRequest), not marked as ignorable (4 known '
            'properties: "customerId", "items", "currency", "notes"])',
        ),
        (
            'java.lang.UnsupportedClassVersionError: com/acme/orders/Main has been compiled by a more '
            'recent version of the Java Runtime (class file version 65.0), this version of the Java '
            'Runtime only recognizes class file versions up to 61.0',
        ),
    ),
    'class-name/TooLarge': (
        (
            'org.apache.kafka.common.errors.RecordTooLargeException: The message is 2097230 bytes when '
            'serialized which is larger than 1048576, which is the value of the max.request.size '
            'configuration.',
        ),
        (
            'An error occurred (RequestThrottled) when calling the ReceiveMessage operation: Request '
            'is throttled.',
        ),
    ),
    'class-name/Ambiguous': (
        (
            'psycopg2.errors.AmbiguousColumn: column reference "id" is ambiguous\nLINE 1: SELECT id '
            'FROM orders JOIN customers USING (tenant_id)',
        ),
        (
            'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)',
        ),
    ),
    'class-name/AlreadyExists': (
        (
            "rpc error: code = AlreadyExists desc = customer with external_id 'crm-4412' already exists",
        ),
        (
            'rpc error: code = Unauthenticated desc = transport: per-RPC creds failed due to error: '
            'oauth2: cannot fetch token: 401 Unauthorized',
        ),
    ),
    'class-name/Unauthenticated': (
        (
            'rpc error: code = Unauthenticated desc = transport: per-RPC creds failed due to error: '
            'oauth2: cannot fetch token: 401 Unauthorized',
        ),
        (
            "rpc error: code = AlreadyExists desc = customer with external_id 'crm-4412' already exists",
        ),
    ),
    'class-name/LockContention': (
        (
            'psycopg2.errors.LockNotAvailable: canceling statement due to lock timeout\nCONTEXT:  while '
            'locking tuple (0,14) in relation "schema_migrations"',
        ),
        (
            'psycopg2.errors.SerializationFailure: could not serialize access due to concurrent update',
        ),
    ),
    'wording/timed out': (
        (
            'nats: timeout',
        ),
        (
            'Expected 1 row, got 0',
        ),
    ),
    'wording/try again': (
        (
            'Something went wrong. Please try again.',
        ),
        (
            "ERROR: Please run 'az login' to setup account.",
        ),
    ),
    'wording/unavailable': (
        (
            'request failed: the upstream is temporarily unavailable',
        ),
        (
            'startup failed: the database URL is malformed',
        ),
    ),
    'wording/connection dropped': (
        (
            'java.net.SocketException: Connection reset',
        ),
        (
            'upstream connect error or disconnect/reset before headers. reset reason: connection '
            'termination',
        ),
    ),
    'wording/deadlock': (
        (
            'ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction',
        ),
        (
            'nats: timeout',
        ),
    ),
    'wording/refused': (
        (
            'dial tcp 10.0.2.15:5432: connect: connection refused',
        ),
        (
            'dial tcp: lookup ledger.internal on 10.96.0.10:53: no such host',
        ),
    ),
    'wording/exhausted': (
        (
            'pika.exceptions.ConnectionBlockedTimeout: connection.blocked: low on memory (memory '
            'resource alarm)',
        ),
        (
            'anthropic.APIConnectionError: Connection error.',
        ),
    ),
    'wording/locked': (
        (
            'sqlite3.OperationalError: database is locked',
        ),
        (
            'sqlite3.OperationalError: disk I/O error',
        ),
    ),
    'wording/rebalance': (
        (
            'java.util.ConcurrentModificationException at OrderBook.rebalance',
        ),
        (
            'java.net.SocketException: Connection reset',
        ),
    ),
    'wording/rate limit': (
        (
            'Error: An API error occurred: ratelimited (Retry-After: 30)',
        ),
        (
            'Error: configmap "api-config" not found',
        ),
    ),
    'wording/certificate': (
        (
            'Host key verification failed.',
        ),
        (
            'sqlite3.IntegrityError: FOREIGN KEY constraint failed',
        ),
    ),
    'wording/syntax error': (
        (
            'sqlite3.OperationalError: near "FROM": syntax error',
        ),
        (
            'sqlite3.OperationalError: disk I/O error',
        ),
    ),
    'wording/git rejected': (
        (
            '! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to '
            "'github.com:acme/infra.git'",
        ),
        (
            'ERROR: (gcloud.functions.deploy) PERMISSION_DENIED: Cloud Build API has not been used in '
            'project acme-dev before or it is disabled.',
        ),
    ),
    'wording/dependency resolution': (
        (
            'fatal: not a git repository (or any of the parent directories): .git',
        ),
        (
            '/bin/sh: 1: jq: not found',
        ),
    ),
    'wording/unbound variable': (
        (
            'bash: AWS_REGION: unbound variable',
        ),
        (
            'bash: ./deploy.sh: Permission denied',
        ),
    ),
    'wording/api disabled': (
        (
            'ERROR: (gcloud.functions.deploy) PERMISSION_DENIED: Cloud Build API has not been used in '
            'project acme-dev before or it is disabled.',
        ),
        (
            'bash: ./deploy.sh: Permission denied',
        ),
    ),
    'wording/device failure': (
        (
            'sqlite3.OperationalError: disk I/O error',
        ),
        (
            'sqlite3.OperationalError: near "FROM": syntax error',
        ),
    ),
    'wording/incompatible': (
        (
            'pymysql.err.OperationalError: (1049, "Unknown database \'analytics_v2\'")',
        ),
        (
            'sqlite3.OperationalError: database is locked',
        ),
    ),
    'wording/plan or billing': (
        (
            'billing API answered HTTP 402 Payment Required',
        ),
        (
            'HTTP 401 Unauthorized: invalid api key',
        ),
    ),
    'wording/connection string': (
        (
            'startup failed: the database URL is malformed',
        ),
        (
            'request failed: the upstream is temporarily unavailable',
        ),
    ),
    'wording/missing header': (
        (
            'fatal error: openssl/ssl.h: No such file or directory\n compilation terminated.',
        ),
        (
            'Error: Missing helper: "formatDate"',
        ),
    ),
    'wording/code misuse': (
        (
            "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x89 in position 0: invalid start byte",
        ),
        (
            'HTTP 401 Unauthorized: invalid api key',
        ),
    ),
    'wording/build failed': (
        (
            'Build failed; check build logs for details',
        ),
        (
            'Host key verification failed.',
        ),
    ),
    'wording/please retry': (
        (
            'Error: An API error occurred: ratelimited (Retry-After: 30)',
        ),
        (
            'Error: configmap "api-config" not found',
        ),
    ),
    'wording/upstream reset': (
        (
            'upstream connect error or disconnect/reset before headers. reset reason: connection '
            'termination',
        ),
        (
            'anthropic.APIConnectionError: Connection error.',
        ),
    ),
    'wording/dns': (
        (
            'dial tcp: lookup ledger.internal on 10.96.0.10:53: no such host',
        ),
        (
            'dial tcp 10.0.2.15:5432: connect: connection refused',
        ),
    ),
    'wording/heap': (
        (
            'OSError: [Errno 24] Too many open files',
        ),
        (
            'OSError: [Errno 28] No space left on device',
        ),
    ),
    'wording/licence or proxy': (
        (
            "requests.exceptions.ProxyError: HTTPSConnectionPool(host='pypi.org', port=443): Max "
            "retries exceeded with url: /simple/numpy/ (Caused by ProxyError('Unable to connect to "
            "proxy', OSError('Tunnel connection failed: 407 Proxy Authentication Required')))",
        ),
        (
            'Host key verification failed.',
        ),
    ),
    'wording/type misuse': (
        (
            'IndexError: list index out of range',
        ),
        (
            'nats: timeout',
        ),
    ),
    'wording/panic': (
        (
            'sqlite3.IntegrityError: FOREIGN KEY constraint failed',
        ),
        (
            'Host key verification failed.',
        ),
    ),
    'wording/name resolution': (
        (
            'could not resolve hostname api.internal',
        ),
        (
            'Error: configmap "api-config" not found',
        ),
    ),
    'wording/out of memory': (
        (
            'Error: OCI runtime error: crun: fork: Cannot allocate memory',
        ),
        (
            'CUDA error: CUDA driver version is insufficient for CUDA runtime version',
        ),
    ),
    'wording/disk full': (
        (
            'OSError: [Errno 28] No space left on device',
        ),
        (
            'OSError: [Errno 24] Too many open files',
        ),
    ),
    'wording/down': (
        (
            'CLUSTERDOWN The cluster is down',
        ),
        (
            'The node had condition: [DiskPressure].',
        ),
    ),
    'wording/denied': (
        (
            'bash: ./deploy.sh: Permission denied',
        ),
        (
            'bash: AWS_REGION: unbound variable',
        ),
    ),
    'wording/credentials': (
        (
            'HTTP 401 Unauthorized: invalid api key',
        ),
        (
            'billing API answered HTTP 402 Payment Required',
        ),
    ),
    'wording/config file': (
        (
            'CUDA error: CUDA driver version is insufficient for CUDA runtime version',
        ),
        (
            'Error: OCI runtime error: crun: fork: Cannot allocate memory',
        ),
    ),
    'wording/not configured': (
        (
            'Error: Missing required environment variable: SENTRY_DSN',
        ),
        (
            'Error: Missing helper: "formatDate"',
        ),
    ),
    'wording/unsupported version': (
        (
            'locale.Error: unsupported locale setting',
        ),
        (
            'Error: Missing helper: "formatDate"',
        ),
    ),
    'wording/not installed': (
        (
            '/bin/sh: 1: jq: not found',
        ),
        (
            'Error: configmap "api-config" not found',
        ),
    ),
    'wording/invalid input': (
        (
            'startup failed: the database URL is malformed',
        ),
        (
            'request failed: the upstream is temporarily unavailable',
        ),
    ),
    'wording/must be': (
        (
            'stripe.error.InvalidRequestError: Request req_Qx1y: Amount must be at least 50 cents',
        ),
        (
            '414 Request-URI Too Large',
        ),
    ),
    'wording/expected got': (
        (
            'Expected 1 row, got 0',
        ),
        (
            './release.sh: line 17: [: =: unary operator expected',
        ),
    ),
    'wording/not found': (
        (
            '/bin/sh: 1: jq: not found',
        ),
        (
            'PATCH /v1/items/7: HTTP 501 Not Implemented',
        ),
    ),
    'wording/division by zero': (
        (
            'ZeroDivisionError: division by zero',
        ),
        (
            'nats: timeout',
        ),
    ),
    'wording/null': (
        (
            'Exception in thread "main" java.lang.NullPointerException: Cannot invoke '
            '"String.length()" because "name" is null',
        ),
        (
            'java.net.SocketException: Connection reset',
        ),
    ),
    'wording/already exists': (
        (
            "rpc error: code = AlreadyExists desc = customer with external_id 'crm-4412' already exists",
        ),
        (
            'Error: Missing helper: "formatDate"',
        ),
    ),
    'wording/unsupported': (
        (
            'PATCH /v1/items/7: HTTP 501 Not Implemented',
        ),
        (
            '/bin/sh: 1: jq: not found',
        ),
    ),
    'wording/disconnected': (
        (
            'anthropic.APIConnectionError: Connection error.',
        ),
        (
            'upstream connect error or disconnect/reset before headers. reset reason: connection '
            'termination',
        ),
    ),
    'wording/in progress': (
        (
            'Error: An API error occurred: ratelimited (Retry-After: 30)',
        ),
        (
            'Error: configmap "api-config" not found',
        ),
    ),
    'wording/connection limit': (
        (
            'ERR max number of clients reached',
        ),
        (
            'pymysql.err.OperationalError: (1049, "Unknown database \'analytics_v2\'")',
        ),
    ),
    'wording/storage full': (
        (
            'The node had condition: [DiskPressure].',
        ),
        (
            'CLUSTERDOWN The cluster is down',
        ),
    ),
    'wording/config resource missing': (
        (
            'Error: configmap "api-config" not found',
        ),
        (
            '/bin/sh: 1: jq: not found',
        ),
    ),
    'wording/object missing': (
        (
            'Error: Missing helper: "formatDate"',
        ),
        (
            'Error: Missing required environment variable: SENTRY_DSN',
        ),
    ),
    'wording/unknown field': (
        (
            "Unknown encoder 'libfdk_aac'",
        ),
        (
            'pymysql.err.OperationalError: (1049, "Unknown database \'analytics_v2\'")',
        ),
    ),
    'wording/login needed': (
        (
            "ERROR: Please run 'az login' to setup account.",
        ),
        (
            'Error: Missing helper: "formatDate"',
        ),
    ),
    'wording/disabled': (
        (
            'WRONGPASS invalid username-password pair or user is disabled.',
        ),
        (
            'HTTP 401 Unauthorized: invalid api key',
        ),
    ),
    'wording/too long': (
        (
            '414 Request-URI Too Large',
        ),
        (
            'OSError: [Errno 24] Too many open files',
        ),
    ),
    'wording/failed validation': (
        (
            "ShopifyAPI::ValidationException: Validation failed: Title can't be blank",
        ),
        (
            'Host key verification failed.',
        ),
    ),
    'wording/shell misuse': (
        (
            './release.sh: line 17: [: =: unary operator expected',
        ),
        (
            'Expected 1 row, got 0',
        ),
    ),
    'wording/transport security': (
        (
            'smtplib.SMTPException: STARTTLS extension not supported by server.',
        ),
        (
            '/bin/sh: 1: jq: not found',
        ),
    ),
}
