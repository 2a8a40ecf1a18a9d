"""The compressed week: the stack started, the followers joined, then hour by simulated hour
the whales trade in bursts, markets end and pay out, followers trade by hand, claim and
withdraw, while a worker is SIGKILLed, the venue restarts its engine and answers get lost;
then everything settles and the invariants are checked."""

from __future__ import annotations

import random
import secrets
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.soak.followers import PROFILES, Follower
from bench.soak.invariants import Row, check_all
from bench.soak.receiver import Receiver
from bench.soak.world import World

DAY, HOUR = 86400.0, 3600.0
MARKET_HOURS = 6  # a sandbox market lives this many simulated hours (at least MIN_LIFETIME)
MIN_LIFETIME = 20.0  # seconds: a market's end, payout and claims take a few on the chain
SETTLE_SECONDS = 180.0  # after the last hour: the copies, money and deliveries in flight end
QUIET_CHECKS = 8  # 2 s apart: a fill the engine sees late is decided within them
ORDER_PATH, SUBMIT_PATH = "/clob/order", "/relayer/submit"


@dataclass(frozen=True)
class Options:
    """What `copytrade dev soak` was asked for."""

    days: float = 7.0
    speed: float = 1440.0  # simulated seconds per second: 1440 makes a day a minute
    followers: int = 12
    seed: int | None = None
    instance: Path | None = None
    database_url: str | None = None


@dataclass
class Outcome:
    """The checks' rows and what the run did."""

    rows: list[Row]
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every invariant held."""
        return all(row.ok for row in self.rows)


def _load() -> str:
    """The machine's 1-, 5- and 15-minute load averages."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


class Soak:
    """One run: the world, the followers, the schedule, the checks."""

    def __init__(self, options: Options, environ: Mapping[str, str],
                 say: Callable[[str], None]) -> None:
        self.options = options
        self.seed = options.seed if options.seed is not None else secrets.randbits(32)
        self.rng = random.Random(self.seed)
        begun = time.monotonic()
        # each line says when it came, so a slow run shows which stage took the time
        self.say = lambda text: say(f"{text} (+{time.monotonic() - begun:.0f} s)")
        instance = options.instance or Path(tempfile.mkdtemp(prefix="copytrade-soak-"))
        env = dict(environ)
        env["DATABASE_URL"] = options.database_url or f"sqlite:///{instance / 'soak.db'}"
        hour = HOUR / options.speed
        # flood control's window (5 min on a server), compressed too, so what it holds back
        # goes out in a digest before the end
        env["NOTIFY_BURST_WINDOW_SECONDS"] = str(round(max(5.0, 300 / options.speed), 1))
        self.hour = hour
        self.world = World(instance, env, max(MIN_LIFETIME, MARKET_HOURS * hour))
        self.receiver = Receiver()
        self.followers: list[Follower] = []
        self.events: Counter[str] = Counter()
        self.loads: list[float] = []
        # people act at once, not one after another: their requests run here, and the hours
        # go on while a claim or an order waits for its answer
        self.people = ThreadPoolExecutor(max_workers=8, thread_name_prefix="soak-follower")
        self.acting: list[Future[Any]] = []

    # -- the run --------------------------------------------------------------------------

    def run(self) -> Outcome:
        """Start, live the days, settle, check; the stack is stopped whatever happens."""
        started = time.monotonic()
        self.say(f"soak: seed {self.seed}, {self.options.days:g} day(s) at {self.options.speed:g}x"
                 f" ({self.hour:.2f} s per simulated hour), {self.options.followers} followers,"
                 f" instance {self.world.instance}")
        try:
            self.world.start()
            self.say(f"soak: stack up at {self.world.web} (venue {self.world.venue_url})")
            self.join()
            self.say(f"soak: {len(self.followers)} followers copying")
            lived = time.monotonic()
            self.live()
            ended, ended_at = time.time(), time.monotonic()
            self.settle()
            settled = time.monotonic()
            rows = check_all(self.world, self.followers, self.receiver, ended)
            figures = {"seed": self.seed, "days": self.options.days,
                       "speed": self.options.speed, "followers": len(self.followers),
                       "events": dict(self.events), "worker kills": self.world.kills,
                       "wall seconds": round(time.monotonic() - started),
                       "joining seconds": round(lived - started),
                       "living seconds": round(ended_at - lived),
                       "settling seconds": round(settled - ended_at),
                       "load while living": (f"{sum(self.loads) / len(self.loads):.2f}"
                                             if self.loads else "unknown"),
                       "load at the end": _load(),
                       "instance": str(self.world.instance)}
            return Outcome(rows, figures)
        finally:
            self.people.shutdown(wait=True, cancel_futures=True)
            self.world.stop()
            self.receiver.close()

    def act(self, action: Callable[..., None], *args: Any) -> None:
        """Have a follower do something, beside the others."""
        self.acting.append(self.people.submit(action, *args))

    def join(self) -> None:
        """A dozen people sign up, fund their wallets, add a webhook and start copying."""
        whales = self.world.control("GET", "/state")["whales"]
        self.followers = [Follower(self.world, n, whales[n % len(whales)],
                                   PROFILES[n % len(PROFILES)])
                          for n in range(self.options.followers)]
        joined = [self.people.submit(self._join, follower) for follower in self.followers]
        for future in joined:
            future.result()

    def _join(self, follower: Follower) -> None:
        follower.sign_in()
        follower.open_account()
        follower.wait_ready()
        follower.deposit()
        follower.subscribe(self.receiver.url(follower.name))
        follower.copy()

    def live(self) -> None:
        """Hour by simulated hour, the world goes on; chaos comes at its hours each day."""
        hours = round(self.options.days * 24)
        killed: str | None = None
        resolved = self._resolved()
        for hour in range(hours):
            due = time.monotonic() + self.hour
            of_day = hour % 24
            if self.rng.random() < 0.6:  # a burst of whale trades
                for _ in range(self.rng.randint(1, 4)):
                    self.world.control("POST", "/whales/tick")
                    self.events["whale trades"] += 1
            if of_day == 4:  # the venue matches orders whose answers are lost
                self.world.control("POST", "/faults", {
                    "path": ORDER_PATH, "method": "POST", "count": 2, "after": True,
                    "status": 500})
                self.events["lost order answers"] += 2
            if of_day == 8:
                killed = self.world.kill_worker(hour // 24)
                self.say(f"soak: day {hour // 24 + 1}: SIGKILLed {killed}")
            if of_day == 9 and killed:
                self.world.start_worker(killed)
                killed = None
            if of_day == 14:  # the matching engine restarts: 425, then post-only
                self.world.control("POST", "/restart", {
                    "seconds": str(round(max(2.0, self.hour * 2), 1)),
                    "post_only_seconds": str(round(max(2.0, self.hour * 2), 1)),
                    "retry_after": 1})
                self.events["venue restarts"] += 1
            if of_day == 18:  # a relayer batch runs and its answer is lost
                self.world.control("POST", "/faults", {
                    "path": SUBMIT_PATH, "method": "POST", "count": 1, "after": True,
                    "status": 500})
                self.events["lost relayer answers"] += 1
            if of_day % 4 == 2:
                self.trade_by_hand()
            if of_day == 12:
                for follower in self.rng.sample(self.followers, max(1, len(self.followers) // 3)):
                    self.act(follower.withdraw, Decimal(1))
                    self.events["withdrawals asked"] += 1
            if of_day % 3 == 0 and (now := self._resolved()) > resolved:
                resolved = now
                for follower in self.followers:
                    self.act(follower.claim)
                self.events["claim rounds"] += 1
            self.loads.append(float(_load().split()[0]) if _load() != "unknown" else 0.0)
            if hour % 24 == 23:
                self.say(f"soak: day {hour // 24 + 1} done, {self._resolved()} markets ended")
            time.sleep(max(0.0, due - time.monotonic()))
        if killed:
            self.world.start_worker(killed)

    def trade_by_hand(self) -> None:
        """A few followers buy a little of an open market themselves."""
        markets = [m for m in self.world.control("GET", "/state")["markets"] if not m["closed"]
                   and Decimal("0.1") < Decimal(m["fair_price"]) < Decimal("0.9")]
        if not markets:
            return
        for follower in self.rng.sample(self.followers, max(1, len(self.followers) // 4)):
            market = self.rng.choice(markets)
            self.act(follower.trade_by_hand, self.rng.choice(market["token_ids"]),
                     self.rng.choice((2, 3, 5)))
            self.events["manual orders asked"] += 1

    def _resolved(self) -> int:
        return sum(1 for m in self.world.control("GET", "/state")["markets"] if m["closed"])

    def settle(self) -> None:
        """The world stands still (no trade, market end or fault); a last claim round; then
        wait for the copies, money and notifications in flight to end."""
        self.world.still()
        wait(self.acting)
        for follower in self.followers:
            self.act(follower.claim)
        wait(self.acting)
        for future in self.acting:
            future.result()  # a follower's request the app refused unexpectedly fails here
        deadline = time.monotonic() + SETTLE_SECONDS
        quiet = 0  # checks in a row that found nothing moving (a late fill comes later)
        while quiet < QUIET_CHECKS and time.monotonic() < deadline:
            time.sleep(2)
            busy = self._in_flight()
            quiet = 0 if busy else quiet + 1
        self.say(f"soak: settled ({busy or 'nothing'} in flight)")

    def _in_flight(self) -> str:
        """What is still moving (open copies, money, deliveries), as text; '' when none."""
        from models import database
        from models.copying import INTENT_OPEN, CopyIntent
        from models.notifications import HELD, PENDING, SENDING, NotificationDelivery
        from models.wallet import OPEN_STATES, Claim, Withdrawal

        bound = database.bind(self.world.settings.database_url)
        with bound.connection_context():
            counts = {
                "copies": CopyIntent.select().where(CopyIntent.status.in_(INTENT_OPEN)).count(),
                "withdrawals": Withdrawal.select().where(
                    Withdrawal.status.in_(OPEN_STATES)).count(),
                "claims": Claim.select().where(Claim.status.in_(OPEN_STATES)).count(),
                "deliveries": NotificationDelivery.select().where(
                    NotificationDelivery.status.in_((PENDING, SENDING, HELD))).count()}
        return ", ".join(f"{n} {what}" for what, n in counts.items() if n)


def table(outcome: Outcome) -> str:
    """The invariants as a table: pass/fail, the numbers, what broke."""
    lines = ["| invariant | result | figures |", "|---|---|---|"]
    for row in outcome.rows:
        figures = ", ".join(f"{k}: {v}" for k, v in row.figures.items())
        lines.append(f"| {row.name} | {'pass' if row.ok else 'FAIL'} | {figures} |")
    for row in outcome.rows:
        for failure in row.failures:
            lines.append(f"  {row.name}: {failure}")
    run = ", ".join(f"{k}: {v}" for k, v in outcome.figures.items())
    return "\n".join([*lines, "", f"run: {run}"])
