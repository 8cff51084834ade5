"""The Redis cache backend against a real redis-server (started here on loopback; .ci/run installs it).

Shared-cache behaviour across clients, processes and "machines" (separate connections),
replay, CLI export/import with --backend, lock expiry after a crashed holder, and that no
secret (API key, Redis password) is ever stored or printed.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from pytest_judgerel.errors import CacheMissError, ConfigError
from pytest_judgerel.llm.cache import open_backend
from pytest_judgerel.llm.client import LLMClient, LLMSettings
from pytest_judgerel.llm.request import LLMRequest
from pytest_judgerel.testing.fake_server import FakeLLMServer

API_KEY = "sk-test"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="session")
def redis_server_port(tmp_path_factory):
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server); .ci/run installs it")
    pytest.importorskip("redis", reason="the redis package is missing: pip install 'pytest-judgerel[redis]'")
    port = _free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(workdir),
                             "--unixsocket", str(workdir / "redis.sock"), "--unixsocketperm", "700"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not _ping(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not answer PING on port {port} (exit code {proc.poll()})")
            time.sleep(0.05)
        yield port
    finally:
        proc.kill()
        proc.wait(timeout=10)


_prefixes = iter(range(10**6))


@pytest.fixture
def redis_socket(redis_server_port, tmp_path_factory):
    sockets = list(tmp_path_factory.getbasetemp().glob("redis*/redis.sock"))
    assert sockets, "redis-server was started with --unixsocket"
    return sockets[0]


@pytest.fixture
def redis_url(redis_server_port):
    """A URL with a prefix of its own, so tests never see each other's keys."""
    return f"redis://127.0.0.1:{redis_server_port}/0?prefix=t{next(_prefixes)}:"


@pytest.fixture
def raw_redis(redis_server_port):
    import redis

    client = redis.Redis(host="127.0.0.1", port=redis_server_port, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def server():
    with FakeLLMServer(latency=0.01) as srv:
        yield srv


def _request(server: FakeLLMServer, prompt: str, **fields) -> LLMRequest:
    fields.setdefault("model", "openai/fake")
    fields.setdefault("api_key", API_KEY)
    fields.setdefault("api_base", server.url)
    return LLMRequest(messages=({"role": "user", "content": prompt},), **fields)


def _client(url: str, **settings) -> LLMClient:
    settings.setdefault("timeout", 10.0)
    settings.setdefault("backoff_base", 0.01)
    return LLMClient(LLMSettings(cache_backend=url, **settings))


def _prompts_sent(server: FakeLLMServer) -> Counter:
    return Counter(entry["body"]["messages"][-1]["content"] for entry in server.log)


# record / replay -----------------------------------------------------------------------------
def test_record_then_replay_from_redis_with_zero_upstream_calls(server, redis_url, tmp_path):
    requests = [_request(server, f"rate item {i}", temperature=1.0, sample_index=r) for i in range(4) for r in range(3)]
    with _client(redis_url) as client:
        first = client.complete_many(requests)
        assert client.stats.misses == 12 and client.stats.hits == 0
    assert server.requests == 12
    assert not (tmp_path / ".judgerel_cache").exists()

    server.reset()
    with _client(redis_url, cache_mode="replay") as client:  # a new client and connection
        second = client.complete_many(requests)
        assert client.stats.hits == 12 and client.stats.misses == 0
    assert server.requests == 0
    assert [r.text for r in second] == [r.text for r in first]
    assert [r.key for r in second] == [r.key for r in first]
    assert all(r.cached for r in second)


def test_replay_miss_raises_cache_miss_error(server, redis_url):
    with _client(redis_url, cache_mode="replay") as client:
        with pytest.raises(CacheMissError, match="capital of Peru"):
            client.complete(_request(server, "What is the capital of Peru?",
                                     metadata={"test": "tests/test_geo.py::test_peru"}))
    assert server.requests == 0


def test_entries_are_the_same_json_as_diskcache(server, redis_url, raw_redis, tmp_path):
    request = _request(server, "same format?")
    with _client(redis_url) as client:
        answer = client.complete(request)
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "disk"), cache_mode="replay")) as disk_client:
        from pytest_judgerel.llm.cache_admin import import_cache

        backend = open_backend(redis_url)
        stored = backend.get(answer.key)
        backend.close()
        assert stored["key"] == answer.key and stored["response"]["text"] == answer.text
        prefix = redis_url.rsplit("prefix=", 1)[1]
        raw = raw_redis.get(f"{prefix}e:{answer.key}")
        from pytest_judgerel.llm.backend import decode_entry, encode_entry

        assert decode_entry(raw, answer.key) == stored
        assert raw == encode_entry(stored, compress=False)  # the compact layout, as text
        assert json.loads(raw)["f"] == 2 and answer.key not in raw
        # the stored entry loads into diskcache unchanged through an export line
        line = tmp_path / "one.jsonl"
        line.write_text(json.dumps({"key": answer.key, "request": stored["request"],
                                    "response": stored["response"]}) + "\n")
        import_cache(tmp_path / "disk", line)
        assert disk_client.complete(request).text == answer.text


# single flight across processes and machines -------------------------------------------------
WORKER = r"""
import json, os, sys, time
from pathlib import Path
import litellm  # import before the barrier so both workers start calling together
from pytest_judgerel.llm import LLMClient, LLMSettings, LLMRequest
url, api_base, ready, go, n = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5])
reqs = [LLMRequest(model="openai/fake", api_key="sk-test", api_base=api_base,
                   messages=[{"role": "user", "content": f"shared {i}"}]) for i in range(n)]
ready.touch()
deadline = time.monotonic() + 90
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.01)
with LLMClient(LLMSettings(cache_backend=url, timeout=20.0)) as client:
    out = client.complete_many(reqs)
    print(json.dumps({"texts": [r.text for r in out], "misses": client.stats.misses, "hits": client.stats.hits}))
"""


def test_two_processes_sharing_redis_make_one_upstream_call_per_key(redis_url, tmp_path):
    n = 12
    with FakeLLMServer(latency=0.3) as srv:  # slow answers: the two processes overlap on every key
        go = tmp_path / "go"
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, redis_url, srv.url, str(tmp_path / f"ready{i}"),
                                   str(go), str(n)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(2)]
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"ready{i}").exists() for i in range(2)):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
                [p.communicate()[1][-2000:] for p in procs if p.poll() is not None]
            time.sleep(0.02)
        go.touch()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err[-3000:]
            results.append(json.loads(out.strip().splitlines()[-1]))
        assert srv.requests == n
        assert set(_prompts_sent(srv).values()) == {1}
    assert results[0]["texts"] == results[1]["texts"]
    assert results[0]["misses"] + results[1]["misses"] == n
    assert results[0]["hits"] + results[1]["hits"] == n


def test_shards_on_two_machines_with_overlapping_keys_call_once_per_key(redis_url):
    # Two clients with their own connections, as two CI machines running two shards of one suite.
    with FakeLLMServer(latency=0.05) as srv:
        shard_a = [_request(srv, f"item {i}") for i in range(0, 30)]
        shard_b = [_request(srv, f"item {i}") for i in range(15, 45)]  # items 15..29 are in both shards
        results: dict[str, list] = {}
        errors: list[BaseException] = []

        def run(name: str, requests: list) -> None:
            try:
                with _client(redis_url, max_concurrency=8) as client:
                    results[name] = [r.text for r in client.complete_many(requests)]
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(name, reqs)) for name, reqs in (("a", shard_a), ("b", shard_b))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not errors, errors
        assert srv.requests == 45
        sent = _prompts_sent(srv)
        assert set(sent) == {f"item {i}" for i in range(45)} and set(sent.values()) == {1}
    assert results["a"][15:30] == results["b"][0:15]  # the overlap got the same stored answers


def test_unix_socket_url_shares_the_tcp_cache(server, redis_url, redis_socket):
    prefix = redis_url.rsplit("prefix=", 1)[1]
    request = _request(server, "over a unix socket")
    with _client(f"unix://{redis_socket}?db=0&prefix={prefix}") as client:
        recorded = client.complete(request)
    with _client(redis_url, cache_mode="replay") as client:
        assert client.complete(request).text == recorded.text
    assert server.requests == 1


# locks ---------------------------------------------------------------------------------------
# Timing rule (a loaded 2-core CI machine): waits are asserted from below only (a sleep or a
# poll can take longer, never shorter); upper bounds are generous hang guards; a lock that
# must still be held has a TTL far longer than the test.
def test_key_lock_is_exclusive_and_acquire_zero_does_not_block(redis_url):
    first, second = open_backend(redis_url), open_backend(redis_url)
    try:
        held = first.key_lock("ab" * 32)
        assert held.acquire(0)
        other = second.key_lock("ab" * 32)
        start = time.perf_counter()
        assert other.acquire(0) is False
        no_wait = time.perf_counter() - start
        start = time.perf_counter()
        assert other.acquire(1.0) is False
        waited = time.perf_counter() - start
        assert waited >= 1.0  # a timeout is honoured in full while the holder keeps the lock
        assert no_wait < 1.0  # acquire(0) is one round trip, not a wait for its timeout
        assert second.key_lock("cd" * 32).acquire(0)  # other keys are independent
        held.release()
        assert other.acquire(0)
        other.release()
    finally:
        first.close()
        second.close()


CRASHING_HOLDER = r"""
import os, sys, time
from pytest_judgerel.llm.redis_backend import RedisBackend
backend = RedisBackend(sys.argv[1], lock_ttl=float(sys.argv[3]))
assert backend.key_lock(sys.argv[2]).acquire(0)
print(time.time(), flush=True)  # when the lock was taken (its TTL runs from here)
os._exit(0)  # crash while holding the lock: no release, no close
"""


def test_lock_of_a_crashed_holder_expires_after_its_ttl(server, redis_url, raw_redis):
    from pytest_judgerel.llm.keys import cache_key
    from pytest_judgerel.llm.redis_backend import RedisBackend

    ttl = 3.0
    request = _request(server, "held by a crashed worker")
    key = cache_key(request)
    done = subprocess.run([sys.executable, "-c", CRASHING_HOLDER, redis_url, key, str(ttl)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    taken = float(done.stdout.strip().splitlines()[-1])
    prefix = redis_url.rsplit("prefix=", 1)[1]
    assert raw_redis.pttl(f"{prefix}lock:{key}") > 0  # still held by the dead process, with an expiry
    backend = RedisBackend(redis_url, lock_ttl=ttl)
    try:
        with LLMClient(LLMSettings(timeout=10.0), backend=backend) as client:
            answer = client.complete(request)
        finished = time.time()
    finally:
        backend.close()
    assert answer.cached is False and server.requests == 1
    # it waited for the expiry (never called while the dead holder's lock stood), then called once
    assert finished >= taken + ttl - 0.05
    assert finished < taken + ttl + 60.0  # hang guard


def test_release_after_expiry_does_not_free_the_next_holders_lock(redis_url):
    from pytest_judgerel.llm.redis_backend import RedisBackend

    short = RedisBackend(redis_url, lock_ttl=0.2)
    long = RedisBackend(redis_url, lock_ttl=120.0)  # outlives the test however slow the machine
    try:
        slow = short.key_lock("ef" * 32)
        assert slow.acquire(0)
        fresh = long.key_lock("ef" * 32)
        assert fresh.acquire(30.0)  # polls until slow's lock has expired (after 0.2 s)
        slow.release()  # must not delete fresh's lock: the token differs
        assert long.key_lock("ef" * 32).acquire(0) is False
        fresh.release()
        assert long.key_lock("ef" * 32).acquire(0)
    finally:
        short.close()
        long.close()


# maintenance through the CLI -----------------------------------------------------------------
def test_cli_export_import_stats_and_prune_with_backend(server, redis_url, redis_server_port, tmp_path, capsys):
    from pytest_judgerel.__main__ import main

    requests = [_request(server, f"cassette {i}", namespace="ns1" if i % 2 else "") for i in range(6)]
    with _client(redis_url) as client:
        recorded = client.complete_many(requests)
        client.complete_many(requests[:2])  # 2 hits
    out = tmp_path / "export.jsonl"
    assert main(["cache", "export", "--backend", redis_url, "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line["key"] for line in lines) == sorted(r.key for r in recorded)

    other = f"redis://127.0.0.1:{redis_server_port}/0?prefix=imported{next(_prefixes)}:"
    assert main(["cache", "import", "--backend", other, str(out)]) == 0
    again = tmp_path / "again.jsonl"
    assert main(["cache", "export", "--backend", other, "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()  # same sorted bytes from the imported copy
    server.reset()
    with _client(other, cache_mode="replay") as client:
        assert [r.text for r in client.complete_many(requests)] == [r.text for r in recorded]
    assert server.requests == 0

    capsys.readouterr()
    assert main(["cache", "stats", "--backend", redis_url, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["entries"] == 6 and stats["namespaces"] == {"": 3, "ns1": 3}
    assert stats["recorded_hits"] == 2 and stats["recorded_misses"] == 6
    assert stats["size_bytes"] > sum(len(json.dumps(line)) for line in lines) / 2

    assert main(["cache", "prune", "--backend", redis_url, "--namespace", "ns1"]) == 0
    with _client(redis_url, cache_mode="replay") as client:
        with pytest.raises(CacheMissError):
            client.complete(requests[1])
        assert client.complete(requests[0]).cached


def test_cli_rejects_dir_and_backend_together(redis_url, tmp_path, capsys):
    from pytest_judgerel.__main__ import main

    with pytest.raises(SystemExit):
        main(["cache", "stats", "--dir", str(tmp_path), "--backend", redis_url])
    assert "not allowed with argument" in capsys.readouterr().err


# secrets and errors --------------------------------------------------------------------------
def test_no_secret_is_stored_or_printed(server, redis_server_port, raw_redis, tmp_path, capsys):
    from pytest_judgerel.__main__ import main

    password = "redis-pw-SECRET-9876"
    user = f"judge{next(_prefixes)}"
    raw_redis.execute_command("ACL", "SETUSER", user, "on", f">{password}", "~*", "+@all")
    prefix = f"sec{next(_prefixes)}:"
    url = f"redis://{user}:{password}@127.0.0.1:{redis_server_port}/0?prefix={prefix}"
    secret_key = "sk-THIS-IS-A-SECRET-4242"
    with _client(url) as client:
        client.complete_many([_request(server, f"q{i}", api_key=secret_key) for i in range(3)])
        assert password not in repr(client.backend)
    names = list(raw_redis.scan_iter(match=prefix + "*"))
    assert len([n for n in names if n.startswith(prefix + "e:")]) == 3
    for name in names:
        value = raw_redis.get(name)
        for secret in (secret_key, API_KEY, password):
            assert secret not in name and secret not in value, name
    out = tmp_path / "export.jsonl"
    assert main(["cache", "export", "--backend", url, "--out", str(out)]) == 0
    assert main(["cache", "stats", "--backend", url]) == 0
    printed = capsys.readouterr()
    assert f"***@127.0.0.1:{redis_server_port}" in printed.out
    for text in (out.read_text(), printed.out, printed.err):
        assert password not in text and secret_key not in text
    assert "api_key" not in out.read_text()


def test_unreachable_server_is_a_config_error_without_the_password(redis_server_port):
    port = _free_port()
    with pytest.raises(ConfigError) as info:
        open_backend(f"redis://someone:hunter2-pw@127.0.0.1:{port}/0")
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message and "unreachable" in message
    assert "hunter2" not in message and "someone" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_wrong_password_is_a_config_error_without_the_password(redis_server_port, raw_redis):
    user = f"judge{next(_prefixes)}"
    raw_redis.execute_command("ACL", "SETUSER", user, "on", ">right-pw", "~*", "+@all")
    with pytest.raises(ConfigError, match="authentication failed") as info:
        open_backend(f"redis://{user}:wrong-pw-777@127.0.0.1:{redis_server_port}/0")
    assert "wrong-pw-777" not in str(info.value)


def test_missing_redis_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis -> ImportError
    with pytest.raises(ConfigError, match=r"pip install 'pytest-judgerel\[redis\]'"):
        open_backend("redis://127.0.0.1:1/0")


@pytest.mark.parametrize("location", ["memcached://host:11211", "s3://bucket/cache"])
def test_unknown_url_scheme_is_rejected_not_made_a_directory(location, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="redis://"):
        open_backend(location)
    assert list(tmp_path.iterdir()) == []


def test_settings_take_a_cache_backend_directory_or_url(tmp_path):
    """--judgerel-cache-backend is documented as a directory (diskcache) or a shared store's URL;
    an unknown scheme fails when the cache opens (test above), never at the settings."""
    assert LLMSettings(cache_backend=str(tmp_path / "dir")).cache_backend == str(tmp_path / "dir")
    assert LLMSettings(cache_backend="redis://127.0.0.1:6379/0").cache_backend == "redis://127.0.0.1:6379/0"
    assert LLMSettings(cache_backend="").cache_backend == ""  # empty = unset (an ini default)


def test_redact_url_strips_credentials():
    from pytest_judgerel.llm.redis_backend import redact_url

    assert redact_url("redis://u:p4ss@h:6379/2") == "redis://***@h:6379/2"
    assert redact_url("rediss://:p4ss@h/0") == "rediss://***@h/0"
    assert "p4ss" not in redact_url("redis://h:6379/0?password=p4ss&prefix=x:")
    assert redact_url("unix:///run/redis.sock?db=1") == "unix:///run/redis.sock?db=1"


def test_sharded_suite_shares_redis_and_merges_reports(pytester, redis_url, server):
    """Two CI shards of one suite: one Redis cache (one upstream call per key across shards),
    one JSON report each, merged by `judgerel report merge` into one report."""
    import json
    import subprocess
    import sys

    pytester.makeconftest(
        f"""
        import pytest
        @pytest.fixture
        def items():
            return [{{"id": f"p{{i}}", "sentence1": f"a{{i}}", "sentence2": "b"}} for i in range(8)]
        """
    )
    body = """
        import pytest
        from pytest_judgerel import assert_icc_above

        @pytest.mark.judge(model="openai/fake", template="stsb", api_base="{url}")
        @pytest.mark.scale("0-10")
        def test_{name}(judge, items):
            r = judge.with_(api_key="sk-test").rate(items, repeats=2)
            assert r.shape == (8, 2)
        """
    pytester.makepyfile(test_one=body.format(url=server.url, name="one"), test_two=body.format(url=server.url, name="two"))
    for shard, path in (("1", "test_one.py"), ("2", "test_two.py")):
        result = pytester.runpytest_subprocess(path, f"--judgerel-cache-backend={redis_url}",
                                               f"--judgerel-json=shard{shard}.json")
        result.assert_outcomes(passed=1)
    assert server.requests == 16  # the second shard replayed the first one's 16 answers from Redis
    merged = subprocess.run([sys.executable, "-m", "pytest_judgerel", "report", "merge", "shard1.json",
                             "shard2.json", "-o", "all.json"], cwd=pytester.path, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stderr
    report = json.loads((pytester.path / "all.json").read_text())
    assert sorted(t["nodeid"] for t in report["tests"]) == ["test_one.py::test_one", "test_two.py::test_two"]
    assert report["totals"]["hits"] == 16 and report["totals"]["misses"] == 16
