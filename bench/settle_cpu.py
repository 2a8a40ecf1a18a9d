"""CPU per ``copy_execution.settle`` of one target fill's copies (the transaction holding
the lock).

After a fill's orders are answered, the copy engine records the answers, the intents'
outcomes and the position changes in one transaction; on SQLite that transaction holds the
write lock, so the next fill of another target waits for it. This benchmark binds a fresh
SQLite file (or ``--database-url``, e.g. ``postgresql://...``: a scratch database, whose
copy tables are emptied), creates one user with ``--orders`` live configs and, ``--fills``
times per run, records a fill's intents and orders with ``copy_execution.record`` (not
timed)
and settles answers built in process (``PostAnswer`` with a ``matched`` result per order,
or with ``--mix`` a mix of buys, a sell, a refusal, a venue error, an unmatched order and
an order a reconciliation moved before the answer was recorded) with
``copy_execution.settle``.

It prints the median over ``--runs`` runs of the per-fill median of the settling thread's
CPU (``time.thread_time``) and wall time, in ms per settle of ``--orders`` orders. Each run
trades a fresh token, so its first fill creates the positions and the rest update them.

``--dump FILE`` writes what was stored (ids and clock times normalised away) as JSON, to
compare two versions of the code; ``--profile`` prints a cProfile (thread CPU) of the settles.
``--record`` times (and profiles) ``copy_execution.record`` instead, the fill's settle then
untimed; ``--code DIR`` measures another tree's code (a worktree) under this harness.

    .venv/bin/python bench/settle_cpu.py --runs 7 --fills 300
    .venv/bin/python bench/settle_cpu.py --database-url postgresql://postgres@127.0.0.1/test
"""

from __future__ import annotations

import argparse
import base64
import json
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

# With --code DIR (a worktree of another commit) the code measured is that tree's.
sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
                       if "--code" in sys.argv[:-1] else Path(__file__).resolve().parent.parent))
import config
from models import User, migrate
from models import database as database_module
from models.base import utcnow
from models.copying import CopyConfig, CopyIntent, CopyPosition
from models.trading import Order, Trade
from services.copying import execution as copy_execution
from services.copying.execution import Ticket
from services.copying.intents import CopyIntentDraft
from services.platform import runtime, venues, wiring
from services.trading import orders
from services.trading.order_plan import MarketInfo, OrderRequest
from services.trading.orders import PostAnswer
from services.wallets import venue_accounts
from venue.errors import VenueRejected
from venue.models import ApiCreds, FeeSchedule, Level, OrderBook, PostOrderResult, Side
from venue.order_signer import OrderSigner
from venue.signing import OrderKey

FEES = FeeSchedule(rate=Decimal("0.02"), exponent=Decimal(1), taker_only=True,
                   rebate_rate=Decimal(0))


def _account() -> venue_accounts.VenueAccount:
    key = "0x" + secrets.token_hex(32)
    opened = OrderKey(key)
    creds = ApiCreds(api_key=str(uuid.uuid4()),
                     secret=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
                     passphrase=secrets.token_hex(16), address=opened.address)
    return venue_accounts.VenueAccount(
        wallet=SimpleNamespace(address=opened.address, funder_address=None,  # type: ignore[arg-type]
                               session_signer=None),
        private_key=key, signature_type=0, creds=creds, key=opened,
        signer=OrderSigner.for_venue(venues.client().config, opened))


def _market(token: str) -> tuple[OrderBook, MarketInfo]:
    book = OrderBook(
        market="0x" + "ab" * 32, asset_id=token, timestamp_ms=0, hash="",
        bids=tuple(Level(Decimal(p) / 100, Decimal(7)) for p in range(49, 0, -1)),
        asks=tuple(Level(Decimal(p) / 100, Decimal(7)) for p in range(51, 100)),
        min_order_size=Decimal(5), tick_size=Decimal("0.01"), neg_risk=False,
        last_trade_price=Decimal("0.5"))
    info = MarketInfo(token_id=token, market_slug="bench", market_title="Bench?",
                      outcome="Yes", condition_id="0x" + "ab" * 32,
                      tick_size=Decimal("0.01"), min_order_size=Decimal(5), neg_risk=False,
                      fee_schedule=FEES, accepting_orders=True, closed=False)
    return book, info


class Bench:
    """One user, ``count`` configs, one account; fills recorded and settled on demand."""

    def __init__(self, count: int, mix: bool) -> None:
        self.mix = mix
        self.account = _account()
        now = utcnow()
        self.user_id = User.create(email=f"{secrets.token_hex(6)}@bench.local",
                                   tier="elite").id
        self.configs = [CopyConfig.create(
            user=self.user_id, target_address="0x" + "12" * 20,
            size_multiplier=Decimal("0.5"), max_position_usdc=Decimal(1000),
            price_deviation_bps=500, blocked_categories="[]", is_active=True,
            paper_trading=False, started_at=now, created_at=now, updated_at=now).id
            for _ in range(count)]
        self.token = ""
        self.fill_number = 0

    def new_token(self, number: int) -> None:
        """Trade a fresh token from now on (its first fill creates the positions)."""
        self.token = f"{number + 1}{'7' * 70}"
        self.book, self.info = _market(self.token)

    def _side(self, index: int) -> Side:
        return Side.SELL if self.mix and index == 1 else Side.BUY

    def record(self, timed: Callable[[Callable[[], Any]], None] | None = None) -> list[Ticket]:
        """Record one fill's intents and orders (``copy_execution.record``, through
        ``timed`` when given); the tickets."""
        self.fill_number += 1
        seen = utcnow()
        key = f"fill-{self.fill_number}-{secrets.token_hex(4)}"
        rows, tickets = [], []
        for index, config_id in enumerate(self.configs):
            side = self._side(index)
            size = Decimal(10 + index) if side is Side.BUY else Decimal("5.5")
            draft = CopyIntentDraft(
                id=uuid.uuid4(), config_id=config_id, user_id=self.user_id,
                kind="mirror", target_trade_key=key, target_address="0x" + "12" * 20,
                target_side=side, target_size=size * 2, target_price=Decimal("0.5"),
                target_timestamp=1_700_000_000 + self.fill_number,
                target_tx_hash="0x" + "cd" * 32, token_id=self.token,
                condition_id=self.info.condition_id, outcome="Yes", outcome_index=0,
                market_slug="bench", paper=False, status="pending", reason="", detail="",
                side=side, size=size, price=Decimal("0.55"), usdc=size * Decimal("0.55"),
                seen_at=seen, detection_delay_ms=3, worker="bench", created_at=seen)
            rows.append(draft)
            ticket = Ticket(draft)
            ticket.prepared = orders.plan_and_sign(
                self.user_id, self.account, OrderRequest.checked(
                    self.token, side, size, "market", time_in_force="FAK",
                    floor_size=side is Side.SELL),
                book=self.book, market=self.info,
                origin=orders.Origin("copy", config_id, str(draft.id), seen),
                available=Decimal(100000))
            tickets.append(ticket)
        if timed is None:
            copy_execution.record(rows, tickets, None)
        else:
            timed(lambda: copy_execution.record(rows, tickets, None))
        return tickets

    def answer(self, tickets: list[Ticket]) -> None:
        """Give every ticket the venue's answer (and, with ``mix``, one reconciled order)."""
        for index, ticket in enumerate(tickets):
            assert ticket.prepared is not None and ticket.order is not None
            ticket.sent_at = ticket.draft.seen_at + timedelta(milliseconds=7 + index)
            plan = ticket.prepared.plan
            shares = plan.size.quantize(Decimal("0.01"))
            value = (shares * Decimal("0.53")).quantize(Decimal("0.0001"))
            result = PostOrderResult(
                success=True, order_id=ticket.prepared.order_hash, status="matched",
                making_amount=value if ticket.draft.side is Side.BUY else shares,
                taking_amount=shares if ticket.draft.side is Side.BUY else value,
                error_msg="", transactions_hashes=(), trade_ids=())
            ticket.answer = PostAnswer(result=result)
            if not self.mix:
                continue
            if index == 2:  # the venue said no in its answer
                ticket.answer = PostAnswer(result=PostOrderResult(
                    success=False, order_id="", status="", making_amount=None,
                    taking_amount=None, error_msg="not enough balance / allowance",
                    transactions_hashes=(), trade_ids=()))
            elif index == 3:  # the venue refused the request
                ticket.answer = PostAnswer(refused=VenueRejected("invalid signature"))
            elif index == 4:  # nothing to match: a FAK order dies unmatched
                ticket.answer = PostAnswer(result=PostOrderResult(
                    success=True, order_id=ticket.prepared.order_hash, status="unmatched",
                    making_amount=Decimal(0), taking_amount=Decimal(0), error_msg="",
                    transactions_hashes=(), trade_ids=()))
            elif index == 5:  # a reconciliation got there first (partly filled, acked)
                Order.update(status="matched", filled_size=Decimal("3.25"),
                             filled_value=Decimal("1.7225"), error="seen at the venue",
                             acknowledged_at=ticket.draft.seen_at).where(
                    Order.id == ticket.order.id).execute()
                ticket.answer = PostAnswer(refused=VenueRejected("duplicate order"))
            elif index == 6:  # fractional amounts with many places survive exactly
                result = PostOrderResult(
                    success=True, order_id=ticket.prepared.order_hash, status="matched",
                    making_amount=Decimal("5.123457"), taking_amount=Decimal("9.87"),
                    error_msg="", transactions_hashes=(), trade_ids=())
                ticket.answer = PostAnswer(result=result)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return f"D:{value}"
    if isinstance(value, uuid.UUID | bytes):
        return str(value)
    if hasattr(value, "isoformat"):
        return "<time>"
    return value


def dump(bench: Bench, fills: list[list[Ticket]]) -> dict[str, Any]:
    """What was stored and answered, with ids and clock times normalised away."""
    config_index = {config_id: i for i, config_id in enumerate(bench.configs)}
    out: dict[str, Any] = {"fills": [], "positions": []}
    skip = {"id", "user", "order", "config", "preview", "signed_body", "order_hash",
            "maker_address", "target_trade_id", "target_trade_key", "trade_id", "order_id",
            "user_id", "config_id", "token_id"}
    for tickets in fills:
        fill = []
        for ticket in tickets:
            assert ticket.order is not None and ticket.outcome is not None
            order = Order.get_by_id(ticket.order.id)
            trade = Trade.get(Trade.order == order.id)
            intent = CopyIntent.get_by_id(ticket.draft.id)
            stored_trade = {k: _plain(v) for k, v in trade.__data__.items() if k not in skip}
            # Acknowledgement minus detection: a clock reading, unless a reconciliation set it.
            acked_at_seen = order.acknowledged_at == intent.seen_at
            if not acked_at_seen and stored_trade["latency_ms"] is not None:
                stored_trade["latency_ms"] = "<ms>"
            fill.append({
                "order": {k: _plain(v) for k, v in order.__data__.items() if k not in skip},
                "trade": stored_trade, "acked_at_seen": acked_at_seen,
                "intent": {k: _plain(v) for k, v in intent.__data__.items() if k not in skip},
                "intent_links": [intent.order_id == order.order_hash,
                                 intent.trade_id == trade.id],
                "outcome": {k: _plain(v) for k, v in ticket.outcome.changes.items()
                            if k not in skip},
                "holding": [_plain(ticket.holding.shares), _plain(ticket.holding.cost_usdc)]
                if ticket.holding else None,
                "opened": ticket.opened})
        out["fills"].append(fill)
    for position in CopyPosition.select().where(CopyPosition.config.in_(bench.configs)):
        row = {k: _plain(v) for k, v in position.__data__.items() if k not in skip}
        row["config"] = config_index[position.config_id]
        row["token"] = position.token_id  # the bench's tokens are the same from run to run
        out["positions"].append(row)
    out["positions"].sort(key=lambda r: (r["config"], r["token"], r["paper"]))
    return out


def main() -> None:
    """Run the benchmark and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="")
    parser.add_argument("--orders", type=int, default=10)
    parser.add_argument("--fills", type=int, default=300, help="settles timed per run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mix", action="store_true", help="mixed answers (see above)")
    parser.add_argument("--dump", default="", help="write what was stored to this file")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="tottime", help="the profile's order (pstats)")
    parser.add_argument("--lines", type=int, default=25, help="the profile's rows")
    parser.add_argument("--code", default="", help="measure this tree's code (a worktree)")
    parser.add_argument("--record", action="store_true",
                        help="time (and profile) copy_execution.record instead of settle")
    args = parser.parse_args()
    runtime.install(wiring.build_runtime(config.load(env={
        "VENUE": "sandbox", "POLYMARKET_GAMMA_URL": "http://127.0.0.1:9/gamma",
        "POLYMARKET_CLOB_URL": "http://127.0.0.1:9/clob",
        "POLYMARKET_DATA_URL": "http://127.0.0.1:9/data",
        "POLYMARKET_RTDS_URL": "ws://127.0.0.1:9/rtds", "CHAIN_ID": "137",
        "REDIS_URL": "redis://127.0.0.1:6379/0", "SECRET_KEY": "bench",
        "WALLET_ENCRYPTION_KEY": "11" * 32})))
    url = args.database_url or f"sqlite:///{tempfile.mkdtemp()}/settle.db"
    database = database_module.bind(url)
    with database.connection_context():
        migrate.migrate(database)
        if url.startswith("postgres"):
            for model in (Trade, Order, CopyIntent, CopyPosition, CopyConfig):
                model.delete().execute()
        bench = Bench(args.orders, args.mix)
        bench.new_token(0)
        for _ in range(20):  # caches and the connection warm
            tickets = bench.record()
            bench.answer(tickets)
            copy_execution.settle(tickets)
        cpus: list[float] = []
        walls: list[float] = []
        kept: list[list[Ticket]] = []
        profile = None
        if args.profile:
            import cProfile

            profile = cProfile.Profile(time.thread_time)  # CPU, as the figures
        def timed(call: Callable[[], Any]) -> None:
            if profile is not None:
                profile.enable()
            wall, cpu = time.perf_counter(), time.thread_time()
            call()
            run_cpu.append((time.thread_time() - cpu) * 1000)
            run_wall.append((time.perf_counter() - wall) * 1000)
            if profile is not None:
                profile.disable()

        for run in range(args.runs):
            bench.new_token(run + 1)
            run_cpu: list[float] = []
            run_wall: list[float] = []
            for _ in range(args.fills):
                tickets = bench.record(timed if args.record else None)
                bench.answer(tickets)
                if args.record:
                    copy_execution.settle(tickets)
                else:
                    timed(lambda: copy_execution.settle(tickets))  # noqa: B023
                if args.dump:
                    kept.append(tickets)
            cpus.append(statistics.median(run_cpu))
            walls.append(statistics.median(run_wall))
        if args.dump:
            Path(args.dump).write_text(json.dumps(dump(bench, kept), indent=1, sort_keys=True))
    step = "record" if args.record else "settle"
    print(f"copy_execution.{step} of {args.orders} orders{' (mixed answers)' if args.mix else ''}"
          f" on {url.split(':')[0]}: median of {args.runs} runs x {args.fills} fills")
    print(f"  CPU  {statistics.median(cpus):6.2f} ms  [{min(cpus):.2f}-{max(cpus):.2f}]")
    print(f"  wall {statistics.median(walls):6.2f} ms  [{min(walls):.2f}-{max(walls):.2f}]")
    if profile is not None:
        import pstats

        pstats.Stats(profile).sort_stats(args.sort).print_stats(args.lines)


if __name__ == "__main__":
    main()
