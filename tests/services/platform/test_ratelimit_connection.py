"""The token bucket's own per-thread connection: what it answers when Redis drops it, forgets
the script, or is not there at all (real Redis; only this test's connections are touched)."""

from __future__ import annotations

import secrets
import threading

import redis

from services.platform.ratelimit import SCHEME_PREFIX, TokenBucketRedisStorage
from tests.conftest import free_port


def _storage(url: str) -> TokenBucketRedisStorage:
    return TokenBucketRedisStorage(SCHEME_PREFIX + url, key_prefix=f"t-{secrets.token_hex(4)}")


def _own_client_id(storage: TokenBucketRedisStorage, admin: redis.Redis) -> int:
    """Redis's id for the calling thread's bucket connection (found by its local port)."""
    host, port = storage._lean.connection._sock.getsockname()[:2]
    for client in admin.client_list():
        if client["addr"] == f"{host}:{port}":
            return int(client["id"])
    raise AssertionError("the bucket's connection is not among Redis's clients")


def test_a_connection_redis_closed_is_replaced_and_the_token_still_taken(redis_url):
    storage, admin = _storage(redis_url), redis.Redis.from_url(redis_url)
    assert storage.take("ip", 1.0, 3).remaining == 2
    admin.client_kill_filter(_id=_own_client_id(storage, admin))
    state = storage.take("ip", 1.0, 3)
    assert state.known and state.allowed
    assert state.remaining == 1  # counted on the same bucket, not admitted blind


def test_a_script_redis_forgot_is_loaded_again(redis_url):
    storage = _storage(redis_url)
    real = storage.lua_token_bucket.sha
    storage.lua_token_bucket.sha = "0" * 40  # what EVALSHA meets after SCRIPT FLUSH
    state = storage.take("ip", 1.0, 2)
    assert state.known and state.remaining == 1
    assert storage.lua_token_bucket.sha == real  # loaded, and the next call goes lean again
    assert storage.take("ip", 1.0, 2).remaining == 0


def test_each_thread_has_its_own_connection_on_one_shared_bucket(redis_url):
    storage = _storage(redis_url)
    seen: list[tuple[int, int]] = []

    def take() -> None:
        state = storage.take("ip", 0.001, 10)
        seen.append((id(storage._lean.connection), state.remaining))

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({connection for connection, _ in seen}) == 4
    assert sorted(remaining for _, remaining in seen) == [6, 7, 8, 9]


def test_redis_unreachable_admits_unknown(redis_url):
    storage = _storage(f"redis://127.0.0.1:{free_port()}/0")
    state = storage.take("ip", 1.0, 1)
    assert state.allowed and not state.known
    assert storage.take("ip", 1.0, 1).allowed  # and again: nothing half-open kept


def test_threads_that_come_and_go_never_use_up_the_pools_connections(redis_url):
    # Each request thread's bucket connection is the limiter's own: counted against the
    # shared pool it was not given back to, a process's short-lived threads exhausted the
    # pool every other Redis user draws from ("Too many connections").
    storage = _storage(redis_url)
    pool = storage.get_connection().connection_pool
    pool.max_connections = pool._created_connections + 2
    errors: list[BaseException] = []

    def take() -> None:
        try:
            assert storage.take("ip", 0.001, 100).allowed
        except BaseException as error:  # handed to the main thread
            errors.append(error)

    for _ in range(6):  # one after another: each thread gone before the next
        thread = threading.Thread(target=take)
        thread.start()
        thread.join()
    assert errors == []
    assert storage.get_connection().ping()  # the pool still serves its own users


def test_the_answer_is_read_whole_in_either_protocol_and_errors_are_raised():
    import pytest

    from services.platform.ratelimit import _parse_reply

    for whole, expected in (
            (b"*5\r\n:1\r\n:499\r\n:2000\r\n:0\r\n$16\r\n1765142400123456\r\n",
             [1, 499, 2000, 0, b"1765142400123456"]),
            (b"*5\r\n:0\r\n:0\r\n:-1\r\n:7\r\n_\r\n", [0, 0, -1, 7, None]),  # RESP3 null
            (b"*4\r\n:1\r\n:2\r\n:3\r\n$-1\r\n", [1, 2, 3, None])):  # RESP2 nil
        assert _parse_reply(whole) == expected
        # split anywhere by the network: incomplete until the last byte
        assert all(_parse_reply(whole[:cut]) is None for cut in range(len(whole)))
    with pytest.raises(redis.exceptions.NoScriptError):
        _parse_reply(b"-NOSCRIPT No matching script. Please use EVAL.\r\n")
    with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
        _parse_reply(b"-WRONGTYPE Operation against a key holding the wrong kind\r\n")
    with pytest.raises(redis.exceptions.InvalidResponse):
        _parse_reply(b"+OK\r\n")
