"""``ChainSource``: the third detection source, the targets' fills as the chain records them.

The exchanges (CTF Exchange and Neg-Risk Exchange, ``config.POLYGON_CONTRACTS`` or their
overrides) emit one ``OrderFilled`` per order a match fills, its maker an indexed topic: the
source asks only for the events whose maker is an owned target (a wallet's own fill is
always the event it is the maker of: ``chain.exchange_events``). Over the RPC's websocket
(``COPY_CHAIN_WS_URL``) the node pushes them as each block comes (``eth_subscribe logs``),
and, where it offers them, pending transactions with their bodies (``newPendingTransactions``,
true): a match call naming a target is decoded before its block (source ``pending``).
Without a websocket the logs are read over HTTP every ``chain_poll_seconds``
(``eth_getLogs`` from the block after the last one read). Web3 is sync (AsyncWeb3 fails
under Trio): every HTTP call runs in a thread.

Each fill is handed to ``deliver`` with its source and the time it happened (its block's
timestamp; a pending one: now). Only new fills are looked for (from the head when the
source starts): older ones are the Data API poll's backfill.

A pending match call is believed only from the venue's operator (``pending_operators``, the
transaction's ``from``): anyone can broadcast a ``matchOrders`` naming a target, and only
the operator's settles (a stranger's reverts when mined, after a copy would have been
made). A believed one is followed to its receipt (over HTTP, every ``chain_poll_seconds``):
when the mined transaction does not show the target's fill as it was seen (reverted, the
fill missing or of another size) or is not mined within ``pending_confirm_seconds``
(dropped or replaced), ``refute`` is told, with why.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import trio
from web3 import Web3
from web3.exceptions import TransactionNotFound

from chain.exchange_events import (
    ORDER_FILLED_TOPIC,
    ExchangeFill,
    decode_match_call,
    decode_order_filled,
    topic_address,
)
from chain.rpc import connect as connect_rpc
from chain.urls import redact_url, scrub
from venue.models import ActivityItem, Market
from venue.ws import ReconnectingFeed
from worker.copy_engine.detection import CHAIN, PENDING
from worker.copy_engine.settings import EngineSettings

log = logging.getLogger("copytrade.copy_engine")

WEBSOCKET, LOGS = "websocket", "logs"
TOPIC_CHUNK = 200  # makers per topic filter: providers cap a filter's size
MAX_BLOCK_RANGE = 500  # blocks per eth_getLogs after an outage (the poll backfills the rest)
BLOCK_TIMES = 64  # block timestamps remembered

Deliver = Callable[[ExchangeFill, str, int], Awaitable[None]]
Refute = Callable[[ExchangeFill, str], Awaitable[None]]
REVERTED, NOT_MINED, DIFFERS = "reverted", "not_mined", "differs"


def _chunks(addresses: list[str]) -> list[list[str]]:
    return [addresses[i:i + TOPIC_CHUNK] for i in range(0, len(addresses), TOPIC_CHUNK)]


def _log_filter(exchanges: tuple[str, ...], makers: list[str]) -> dict[str, Any]:
    return {"address": list(exchanges),
            "topics": [ORDER_FILLED_TOPIC, None, [topic_address(m) for m in makers]]}


def activity_item(fill: ExchangeFill, market: Market, timestamp: int) -> ActivityItem:
    """The fill as the feed and the Data API describe one (the same identity: tx hash,
    token, side, wallet), its market's fields from Gamma."""
    tokens = list(market.token_ids)  # by version: positionIds for a v2 market
    index = tokens.index(fill.token_id) if fill.token_id in tokens else None
    return ActivityItem(
        proxy_wallet=fill.maker, timestamp=timestamp, condition_id=market.condition_id,
        type="TRADE", asset=fill.token_id, side=fill.side, size=fill.size, price=fill.price,
        usdc_size=fill.usdc_size, outcome=market.outcomes[index] if index is not None else "",
        outcome_index=index, transaction_hash=fill.tx_hash, title=market.question,
        slug=market.slug, event_slug=market.event_slugs[0] if market.event_slugs else "",
        name="", pseudonym="", fee=fill.fee_size, role=fill.role)


class ChainSource:
    """Owned targets' exchange fills from the chain (owns its connection task)."""

    def __init__(self, name: str, settings: EngineSettings, rpc_url: str | None,
                 exchanges: Iterable[str], targets: Callable[[], Iterable[str]],
                 deliver: Deliver, refute: Refute | None = None,
                 calls: Callable[[int], None] = lambda count: None) -> None:
        self.name = name
        self.settings = settings
        self.rpc_url = rpc_url
        self.ws_url = settings.chain_ws_url
        self.exchanges = tuple(Web3.to_checksum_address(e) for e in exchanges if e)
        self.targets = targets
        self.deliver = deliver
        self.calls = calls  # told of each JSON-RPC request sent (billed by hosted RPCs)
        self.refute = refute
        self.operators = frozenset(a.lower() for a in settings.pending_operators)
        # Pending calls are read only when there is someone to believe, a websocket to read
        # them from and an HTTP RPC to confirm them over.
        self.use_pending = bool(settings.use_pending and self.operators and self.ws_url
                                and rpc_url)
        self.pending_refused = 0  # pending match calls naming a target from anyone else
        # Believed pending calls not yet confirmed: tx hash -> (give-up time, their fills).
        self.unconfirmed: dict[str, tuple[float, list[ExchangeFill]]] = {}
        self.mode = WEBSOCKET if self.ws_url else LOGS
        self.active = True  # False: stands by as the feed's fallback, not reading
        self.connected = False  # subscribed (websocket) or the last read worked (logs)
        self.pending = False  # pending transactions are being read
        self.last_error: str | None = None
        self.last_block: int | None = None
        self.watching: frozenset[str] = frozenset()  # targets whose logs are asked for
        self._w3: Web3 | None = None
        self._block_times: dict[int, int] = {}
        self._dirty = False  # the targets changed: subscribe again

    def targets_changed(self) -> None:
        """The owned targets changed: the websocket's filters are renewed (logs: next read)."""
        self._dirty = True

    async def run(self) -> None:
        """Read fills until cancelled (reconnecting, or retrying the next poll, on errors)."""
        async with trio.open_nursery() as nursery:
            if self.use_pending:
                nursery.start_soon(self._follow_pending)
            if self.mode == WEBSOCKET:
                await _Subscriptions(self).run()
            else:
                await self._poll_logs()
            nursery.cancel_scope.cancel()

    # -- shared --

    def _web3(self) -> Web3 | None:
        if self._w3 is None and self.rpc_url:
            self._w3 = connect_rpc(self.rpc_url, timeout=10.0)
        return self._w3

    async def block_time(self, log_entry: dict[str, Any], number: int | None) -> int:
        """When a log's block was made (its ``blockTimestamp`` where the node adds it, else
        read once per block over HTTP; now when neither can say)."""
        stamp = log_entry.get("blockTimestamp")
        if stamp is not None:
            return int(stamp, 16) if isinstance(stamp, str) else int(stamp)
        if number is None:
            return int(time.time())
        if number not in self._block_times:
            w3 = self._web3()
            if w3 is None:
                return int(time.time())
            try:
                self.calls(1)
                block = await trio.to_thread.run_sync(w3.eth.get_block, number)
            except Exception as exc:  # the fill still counts: its time is now, then
                log.warning("engine %s: reading block %d: %s", self.name, number,
                            scrub(f"{type(exc).__name__}: {exc}", self.rpc_url or ""))
                return int(time.time())
            self._block_times[number] = int(block["timestamp"])
            while len(self._block_times) > BLOCK_TIMES:
                self._block_times.pop(min(self._block_times))
        return self._block_times[number]

    async def on_log(self, log_entry: dict[str, Any]) -> None:
        """Hand one OrderFilled log of a target to ``deliver``."""
        if log_entry.get("removed"):
            return  # a reorg took it back: the re-mined one comes as a new log
        fill = decode_order_filled(log_entry)
        if fill is None:
            return
        if fill.block_number is not None:
            self.last_block = max(self.last_block or 0, fill.block_number)
        await self.deliver(fill, CHAIN, await self.block_time(log_entry, fill.block_number))

    async def on_pending(self, tx: dict[str, Any]) -> None:
        """Hand the target fills of one pending match call from the venue's operator to
        ``deliver``, and follow its transaction to its receipt."""
        if not isinstance(tx, dict):
            return  # a bare hash: this node sends no bodies
        wanted = {t.lower() for t in self.targets()}
        fills = [f for f in decode_match_call(tx, self.exchanges) if f.maker.lower() in wanted]
        if not fills:
            return
        if str(tx.get("from") or "").lower() not in self.operators:
            # Not the operator's: a call anyone could have sent, which would revert.
            self.pending_refused += 1
            log.warning("engine %s: a pending match call naming %s from %s, not the venue's "
                        "operator: ignored", self.name, fills[0].maker, tx.get("from"))
            return
        now = int(time.time())
        self.unconfirmed[fills[0].tx_hash] = (time.monotonic()
                                              + self.settings.pending_confirm_seconds, fills)
        for fill in fills:
            await self.deliver(fill, PENDING, now)

    async def _follow_pending(self) -> None:
        """Check the believed pending calls' receipts until cancelled."""
        while True:
            await trio.sleep(self.settings.chain_poll_seconds)
            for tx_hash in list(self.unconfirmed):
                try:
                    await self._check_receipt(tx_hash)
                except Exception as exc:  # the RPC down: the next turn asks again
                    # (the logs' health is the subscription's: not marked down for this)
                    log.warning("engine %s: confirming the pending match %s: %s", self.name,
                                tx_hash, scrub(f"{type(exc).__name__}: {exc}",
                                               self.rpc_url or ""))

    async def _check_receipt(self, tx_hash: str) -> None:
        """Settle one believed pending call: confirmed, or refuted (with why)."""
        give_up, fills = self.unconfirmed[tx_hash]
        w3 = self._web3()
        if w3 is None:
            raise RuntimeError("no POLYGON_RPC_URL to confirm pending matches over")
        receipt = await trio.to_thread.run_sync(_receipt, w3, tx_hash)
        if receipt is None:
            if time.monotonic() < give_up:
                return
            refuted = [(fill, NOT_MINED) for fill in fills]
        elif int(receipt.get("status", 1)) != 1:
            refuted = [(fill, REVERTED) for fill in fills]
        else:
            mined = {(m.maker, m.token_id, m.side, m.shares)
                     for entry in receipt.get("logs") or ()
                     if (m := decode_order_filled(dict(entry))) is not None}
            refuted = [(fill, DIFFERS) for fill in fills
                       if (fill.maker, fill.token_id, fill.side, fill.shares) not in mined]
        del self.unconfirmed[tx_hash]
        for fill, why in refuted:
            log.warning("engine %s: the pending match %s of %s was not mined as seen (%s)",
                        self.name, tx_hash, fill.maker, why)
            if self.refute is not None:
                await self.refute(fill, why)

    def failed(self, exc: BaseException) -> None:
        """Record a failure, its text free of the RPC URL's credentials."""
        text = f"{type(exc).__name__}: {exc}"
        for url in (self.rpc_url, self.ws_url):
            if url:
                text = scrub(text, url)
        if self.last_error != text:
            log.warning("engine %s: on-chain detection: %s", self.name, text)
        self.last_error = text
        self.connected = False

    # -- HTTP log polling --

    async def _poll_logs(self) -> None:
        next_block: int | None = None
        while True:
            try:
                next_block = await self._read_logs(next_block)
                self.connected, self.last_error = True, None
            except Exception as exc:  # an RPC down or refusing: the next turn retries
                self.failed(exc)
            await trio.sleep(self.settings.chain_poll_seconds)

    async def _read_logs(self, next_block: int | None) -> int:
        """Read the targets' logs from ``next_block`` to the head; the next block to read."""
        w3 = self._web3()
        if w3 is None:
            raise RuntimeError("no POLYGON_RPC_URL to read logs from")
        makers = sorted({t.lower() for t in self.targets()})
        self.calls(1)
        head = int(await trio.to_thread.run_sync(lambda: w3.eth.block_number))
        if next_block is None or head < next_block:
            # the first read starts at the next block: new fills only
            self.watching = frozenset(makers)
            return head + 1 if next_block is None else next_block
        start = max(next_block, head - MAX_BLOCK_RANGE + 1)
        found: list[dict[str, Any]] = []
        for chunk in _chunks(makers):
            query = {**_log_filter(self.exchanges, chunk), "fromBlock": start, "toBlock": head}
            self.calls(1)
            found += await trio.to_thread.run_sync(w3.eth.get_logs, query)
        for entry in sorted(found, key=lambda e: (e["blockNumber"], e["logIndex"])):
            await self.on_log(dict(entry))
        self.last_block, self.watching = head, frozenset(makers)
        return head + 1


def _receipt(w3: Web3, tx_hash: str) -> dict[str, Any] | None:
    """A transaction's receipt; None while it is not mined (or unknown to the node)."""
    try:
        return dict(w3.eth.get_transaction_receipt(tx_hash))  # type: ignore[arg-type]
    except TransactionNotFound:
        return None


class _Subscriptions(ReconnectingFeed):
    """The websocket: log subscriptions per chunk of targets, and pending transactions."""

    name = "chain websocket"

    def __init__(self, source: ChainSource) -> None:
        super().__init__(source.ws_url, ping_interval=20.0, open_timeout=10.0,
                         backoff_initial=0.5, backoff_max=30.0)
        self.source = source
        self.frames = 0
        self._next_id = 0
        # request id -> (LOGS, PENDING or "unsubscribe"; the targets a LOGS one asks for)
        self._asked: dict[int, tuple[str, frozenset[str]]] = {}
        self._subscriptions: dict[str, str] = {}  # subscription id -> LOGS or PENDING

    async def run(self) -> None:
        """Keep the websocket open and subscribed until cancelled."""
        await self._run_links()

    def _heard(self) -> int:
        return self.frames

    def _link_down(self) -> None:
        super()._link_down()
        self.source.connected = self.source.pending = False

    async def _request(self, websocket: Any, method: str, params: list[Any], kind: str,
                       makers: frozenset[str] = frozenset()) -> None:
        self._next_id += 1
        self._asked[self._next_id] = (kind, makers)
        self.source.calls(1)
        await websocket.send(json.dumps({"jsonrpc": "2.0", "id": self._next_id,
                                         "method": method, "params": params}))

    async def _subscribe_logs(self, websocket: Any) -> None:
        """Subscribe to the current targets' logs, then drop the previous subscriptions
        (the new ones first: a fill in between comes twice, and is de-duplicated)."""
        self.source._dirty = False
        old = [sid for sid, kind in self._subscriptions.items() if kind == LOGS]
        makers = sorted({t.lower() for t in self.source.targets()})
        self.source.watching = frozenset()
        for chunk in _chunks(makers):
            await self._request(websocket, "eth_subscribe",
                                ["logs", _log_filter(self.source.exchanges, chunk)], LOGS,
                                frozenset(chunk))
        for sid in old:
            self._subscriptions.pop(sid, None)
            await self._request(websocket, "eth_unsubscribe", [sid], "unsubscribe")

    async def _session(self, websocket: Any) -> None:
        source = self.source
        self._asked.clear()
        self._subscriptions.clear()
        await self._subscribe_logs(websocket)
        if source.use_pending:
            await self._request(websocket, "eth_subscribe", ["newPendingTransactions", True],
                                PENDING)
        self._link_up()
        source.connected, source.last_error = True, None
        log.info("engine %s: on-chain detection subscribed at %s", source.name,
                 redact_url(source.ws_url))
        while True:
            frame = None
            with trio.move_on_after(0.5):  # recv() is cancellation-safe
                frame = await websocket.recv()
            if source._dirty:
                await self._subscribe_logs(websocket)
            if frame is not None:
                self.frames += 1
                await self._handle(json.loads(frame))

    async def _handle(self, message: dict[str, Any]) -> None:
        source = self.source
        if "id" in message and message.get("id") in self._asked:
            kind, makers = self._asked.pop(message["id"])
            if "error" in message:
                if kind == PENDING:  # not offered here: logs only
                    log.info("engine %s: the chain RPC offers no pending transactions: %s",
                             source.name, message["error"].get("message"))
                elif kind == LOGS:
                    raise ConnectionError(f"log subscription refused: {message['error']}")
            elif kind in (LOGS, PENDING):
                self._subscriptions[str(message["result"])] = kind
                source.pending = source.pending or kind == PENDING
                source.watching |= makers
            return
        params = message.get("params") or {}
        kind = self._subscriptions.get(str(params.get("subscription")))
        if kind == LOGS:
            await source.on_log(params.get("result") or {})
        elif kind == PENDING:
            await source.on_pending(params.get("result"))


__all__ = ["LOGS", "WEBSOCKET", "ChainSource", "activity_item"]
