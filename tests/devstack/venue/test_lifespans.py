"""Markets that live whole lives (issue 43, item 2): the sandbox's markets end by themselves
on a schedule (off unless set), each resolving as the control API resolves it, and a new
market of the same kind is listed in its place, so a long-running stack stays lively;
``copytrade dev resolve`` ends one now."""

from __future__ import annotations

import time

from click.testing import CliRunner

from cli import main
from tests.conftest import DEADLINE, free_port


def _open(control) -> list[dict]:
    return [m for m in control.state()["markets"] if not m["closed"]]


def test_markets_end_on_their_schedule_and_new_ones_replace_them(control) -> None:
    assert control.state()["lifespans"] == {"lifetime": "0", "replenish": True}
    market = control.add_market("short-lived", neg_risk=True, position_ids=True)
    assert market["ends_at"] is None  # no schedule: markets never end
    listed = len(_open(control))

    started = time.time()
    schedule = control.call("POST", "/lifespans", {"lifetime": 1}, expect=200)
    assert schedule["ends"][market["condition_id"]] <= started + 2
    deadline = time.monotonic() + DEADLINE
    while any("-round-" not in m["slug"] for m in _open(control)):  # every first one ended
        assert time.monotonic() < deadline, "the markets never ended"
        time.sleep(0.1)
    schedule = control.call("POST", "/lifespans", {"lifetime": 0}, expect=200)
    assert schedule["ends"] == {}

    ended = control.market("short-lived")
    assert ended["winner"] in (0, 1)
    now_open = _open(control)
    assert len(now_open) == listed  # the catalogue replenished
    [successor] = [m for m in now_open if m["slug"].startswith("short-lived-round-")]
    assert (successor["neg_risk"], successor["position_ids"]) == (True, True)  # its kind
    [gamma] = control.get("/gamma/markets", slug=successor["slug"])
    assert gamma["closed"] is False and gamma["active"] is True
    # the whales trade what is open: the new markets
    traded = control.call("POST", "/whales/tick", expect=201)["fills"]
    assert traded and all("-round-" in fill["slug"] for fill in traded)


def test_a_resolution_without_a_winner_goes_to_the_leading_outcome(control) -> None:
    favoured = control.add_market("yes-favoured", fair_price="0.7")
    doubted = control.add_market("no-favoured", fair_price="0.3")
    for market in (favoured, doubted):
        control.call("POST", f"/markets/{market['condition_id']}/resolve", {}, expect=200)
    assert control.market("yes-favoured")["winner"] == 0
    assert control.market("no-favoured")["winner"] == 1


def test_dev_resolve_ends_a_market_by_slug_or_condition_id(sandbox_venue, control,
                                                          monkeypatch) -> None:
    first = control.add_market("resolve-by-slug", fair_price="0.8")
    second = control.add_market("resolve-by-id", fair_price="0.8")
    runner = CliRunner()

    named = runner.invoke(main, ["dev", "resolve", "resolve-by-slug", "No",
                                 "--sandbox", sandbox_venue.url])
    assert named.exit_code == 0, named.output
    assert "resolve-by-slug" in named.output and "No won" in named.output
    assert control.market("resolve-by-slug")["winner"] == 1

    # a running stack's sandbox: the one SANDBOX_PORT names; the leading outcome by default
    monkeypatch.setenv("SANDBOX_PORT", str(sandbox_venue.port))
    leading = runner.invoke(main, ["dev", "resolve", second["condition_id"].upper()])
    assert leading.exit_code == 0, leading.output
    assert control.market("resolve-by-id")["winner"] == 0

    unknown = runner.invoke(main, ["dev", "resolve", "no-such-market"])
    assert unknown.exit_code != 0 and "no sandbox market" in unknown.output
    wrong = runner.invoke(main, ["dev", "resolve", first["slug"], "Maybe"])
    assert wrong.exit_code != 0 and "outcome must be one of" in wrong.output

    # A stack started with `copytrade up --port P` serves its sandbox on P + 10: where none
    # answers, the error says how to name the right one (it said only "Connection refused").
    monkeypatch.setenv("SANDBOX_PORT", str(free_port()))
    missed = runner.invoke(main, ["dev", "resolve", first["slug"]])
    assert missed.exit_code != 0 and "--sandbox" in missed.output, missed.output
    assert "sandbox venue" in missed.output and "Connection refused" not in missed.output


def test_copytrade_up_sets_its_markets_a_lifetime(sandbox_venue, control) -> None:
    """``copytrade up`` (``--market-lifetime``) switches the schedule on: every open market
    ends within it, one after another."""
    from devstack.stack import start_lifespans

    started = time.time()
    start_lifespans(sandbox_venue.port, 1200)
    state = control.state()
    assert state["lifespans"] == {"lifetime": "1200", "replenish": True}
    ends = sorted(m["ends_at"] for m in state["markets"] if not m["closed"])
    assert started < ends[0] < ends[-1] <= started + 1201
    assert len(set(ends)) == len(ends)  # staggered, not all at once
