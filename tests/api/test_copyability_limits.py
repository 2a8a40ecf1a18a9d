"""Copyability replays are bounded (issue 41, finding 3): one read-only key asking for many
reports gets a few jobs, then 429 with Retry-After; the same question is answered from the
report already built or being built; and the replays wait on a queue of their own, which a
worker serves in slots of their own, so a job of the money queues runs while replays wait.

Against the sandbox over HTTP, real Redis queues and a real worker host (Trio, jobs in
threads)."""

from __future__ import annotations

import secrets
from typing import Any

import trio

from models.copying import CopyabilityReport
from services.copying import copyability_reports
from services.platform import jobs
from tests.chain_venue import run_queued_jobs
from tests.conftest import DEADLINE
from tests.dashboard.conftest import job_prefix  # noqa: F401 - the fixture: queues of its own
from worker import jobs as job_table
from worker.host import WorkerHost, WorkerSettings

RULES = {"size_multiplier": "0.5", "max_position_usdc": "100"}


def _address() -> str:
    return "0x" + secrets.token_hex(20)


def _ask(client: Any, headers: dict[str, str], address: str, p50: int) -> Any:
    """A question of its own per ``p50`` (the delay assumed is part of the question)."""
    return client.post(f"/api/traders/{address}/copyability", headers=headers, json={
        "window": "7d", "rules": RULES, "delay_p50_ms": p50})


def _queued(name: str) -> list[str]:
    queue = jobs.queue(name)
    return [job.func_name for job in queue.get_jobs()]


def test_sixty_replays_by_one_read_only_key_queue_two_the_rest_429(
        client, api_key, user, job_prefix) -> None:  # noqa: F811
    headers = {"Authorization": f"Bearer {api_key('read:markets')}"}
    target = _address()
    answers = [_ask(client, headers, target, 1000 + n) for n in range(60)]

    assert [a.status_code for a in answers] == [202, 202] + [429] * 58
    accepted = [a.get_json() for a in answers[:2]]
    refused = answers[2]
    assert refused.headers["Retry-After"] == str(copyability_reports.IN_FLIGHT_RETRY_SECONDS)
    body = refused.get_json()
    assert (body["code"], body["limit"], body["allowed"]) == (
        "rate_limited", "reports_in_flight", 2)
    assert body["in_flight"] == [a["location"] for a in accepted]
    # Two rows, two jobs, both on the replay queue: none on the queues money jobs use.
    assert CopyabilityReport.select().count() == 2
    assert _queued(jobs.REPLAY_QUEUE) == ["copyability.report"] * 2
    assert all(_queued(name) == [] for name in jobs.WORK_QUEUES)

    # The same question again follows the report being built: never refused.
    again = _ask(client, headers, target, 1000)
    assert again.status_code == 202 and again.get_json()["id"] == accepted[0]["id"]

    assert run_queued_jobs(only={"copyability.report"}) == ["copyability.report"] * 2
    # Built: the same question is answered from the cache, still at the limit of nothing.
    cached = _ask(client, headers, target, 1001)
    assert cached.status_code == 200 and cached.get_json()["id"] == accepted[1]["id"]
    assert cached.get_json()["report"]["fills"] == 0
    # Those two done, two more may fly.
    assert [_ask(client, headers, target, 2000 + n).status_code for n in range(3)] == [
        202, 202, 429]


def test_a_days_reports_are_bounded_and_the_cache_still_answers(
        client, api_key, user, job_prefix, set_settings) -> None:  # noqa: F811
    set_settings(copyability_per_day=3)
    headers = {"Authorization": f"Bearer {api_key('read:markets')}"}
    target = _address()
    for n in range(3):
        assert _ask(client, headers, target, 1000 + n).status_code == 202
        assert run_queued_jobs(only={"copyability.report"}) == ["copyability.report"]
    refused = _ask(client, headers, target, 1003)
    assert refused.status_code == 429
    body = refused.get_json()
    assert (body["code"], body["limit"], body["allowed"]) == (
        "rate_limited", "reports_per_day", 3)
    # When the first of the three is a day old (it was asked a moment ago).
    assert 86_000 < int(refused.headers["Retry-After"]) <= 86_400
    assert CopyabilityReport.select().count() == 3
    # Another key of the same user is the same user.
    other = {"Authorization": f"Bearer {api_key('read:markets')}"}
    assert _ask(client, other, target, 1004).status_code == 429
    # An answered question is answered, limit or not.
    cached = _ask(client, other, target, 1000)
    assert cached.status_code == 200 and cached.get_json()["status"] == "done"


def test_a_job_of_the_money_queues_runs_while_replays_hold_every_replay_slot(
        client, api_key, user, job_prefix, redis_url, venue_control) -> None:  # noqa: F811
    """One capacity slot, one replay slot; the Data API held, so the replays cannot finish."""
    headers = {"Authorization": f"Bearer {api_key('read:markets')}"}
    target = _address()
    job_table.load_modules("")
    settings = WorkerSettings(redis_url=redis_url, prefix=job_prefix, capacity=1, replay_slots=1,
                              grace_seconds=1, heartbeat_seconds=0.5, poll_seconds=0.05)
    # The Data API stalls (20 s an answer, then serves it): the replays cannot finish.
    venue_control.call("POST", "/faults", {"path": "/data", "count": 6, "status": 0,
                                           "delay": 20}, expect=201)
    try:
        asked = [_ask(client, headers, target, 1000 + n) for n in range(2)]
        assert [a.status_code for a in asked] == [202, 202]
        rows = [a.get_json()["id"] for a in asked]
        ran: dict[str, Any] = {}

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                host = await nursery.start(WorkerHost(settings).run)
                try:
                    with trio.fail_after(DEADLINE):
                        # a replay runs (held by the Data API), the other waits for its slot
                        while not any(CopyabilityReport.get_by_id(r).status == "running"
                                      for r in rows):
                            await trio.sleep(0.05)
                        # the job a withdrawal, claim or notification would be queued beside
                        ping = await trio.to_thread.run_sync(jobs.enqueue, "worker.ping")
                        while ping.get_status(refresh=True) != "finished":
                            await trio.sleep(0.05)
                    ran["ping"] = ping.return_value(refresh=True)
                    ran["statuses"] = sorted(CopyabilityReport.get_by_id(r).status
                                             for r in rows)
                    ran["replays_waiting"] = len(_queued(jobs.REPLAY_QUEUE))
                    ran["worker"] = host.name
                finally:
                    host.hurry()

        trio.run(main)
    finally:
        venue_control.call("DELETE", "/faults", expect=200)
    assert ran["ping"] == {"worker": ran["worker"]}
    # while the ping ran, both replays were still unfinished: one held, one queued behind it
    assert ran["statuses"] == ["queued", "running"] and ran["replays_waiting"] == 1
