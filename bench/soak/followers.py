"""The soak's followers: people who sign in, fund their trading wallet, add a webhook, copy
a whale under their own rules, and now and then trade by hand, claim and withdraw, all
through the REST API as a script of theirs would."""

from __future__ import annotations

import secrets
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx

from bench.soak.world import World

# Each follower's rules, in turn (a dozen followers get each once): budgets, a loss stop,
# exposure caps (the config's position cap, the user's total), the failure breaker, inverse
# and fixed-size copies. ``funds`` is the pUSD the follower deposits; ``exposure`` the
# user's cap across configs.
PROFILES: tuple[dict[str, Any], ...] = (
    {"name": "multiplier", "rules": {"size_multiplier": "0.05", "max_position_usdc": "20"}},
    {"name": "fixed size", "rules": {"sizing_mode": "fixed_usdc", "fixed_usdc": "2",
                                     "max_position_usdc": "20"}},
    {"name": "inverse", "rules": {"size_multiplier": "0.05", "max_position_usdc": "15",
                                  "direction": "inverse"}},
    {"name": "total budget", "rules": {"size_multiplier": "0.05", "max_position_usdc": "20",
                                       "total_budget_usdc": "8"}},
    {"name": "daily budget", "rules": {"size_multiplier": "0.05", "max_position_usdc": "20",
                                       "daily_budget_usdc": "4"}},
    {"name": "loss stop", "rules": {"size_multiplier": "0.05", "max_position_usdc": "20",
                                    "loss_stop_usdc": "1", "close_positions_on_stop": True}},
    {"name": "breaker", "funds": "3", "rules": {"size_multiplier": "0.2",
                                                "max_position_usdc": "50",
                                                "max_consecutive_failures": 1}},
    {"name": "position cap", "rules": {"size_multiplier": "0.1", "max_position_usdc": "3"}},
    {"name": "exposure cap", "exposure": "5", "rules": {"size_multiplier": "0.1",
                                                         "max_position_usdc": "20"}},
    {"name": "trade limits", "rules": {"size_multiplier": "0.1", "max_position_usdc": "20",
                                       "max_trade_usdc": "1.5", "min_trade_usdc": "0.5"}},
    {"name": "fixed, no sells", "rules": {"sizing_mode": "fixed_usdc", "fixed_usdc": "1",
                                          "max_position_usdc": "10", "copy_sells": False}},
    {"name": "drawdown", "rules": {"size_multiplier": "0.05", "max_position_usdc": "20",
                                   "max_drawdown_bps": 3000}},
)
DEFAULT_FUNDS = Decimal(40)
RETRY_STATUSES = (425, 429, 502, 503)


@dataclass
class Follower:
    """One person: a session on the web app, a deposit wallet, one copy config."""

    world: World
    number: int
    target: str
    profile: dict[str, Any]
    email: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    session: dict[str, str] = field(default_factory=dict)
    user_id: Any = None  # read from the database by the checks
    maker: str = ""
    config_id: str = ""
    channel_id: str = ""
    funds: Decimal = DEFAULT_FUNDS
    # What the follower did (and what the app said), for the report.
    done: Counter[str] = field(default_factory=Counter)
    withdrawals: list[tuple[str, str, Decimal]] = field(default_factory=list)
    order_keys: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The follower's short name (its webhook path)."""
        return f"f{self.number:02d}"

    # -- the REST API ---------------------------------------------------------------------

    def call(self, method: str, path: str, body: Any = None, *, key: str | None = None,
             ok: tuple[int, ...] = (200, 201, 202, 204), patience: float = 60) -> httpx.Response:
        """Call the web app as this follower; waits out 429/503 (Retry-After) and a web app
        that is not answering; raises on any other answer not in ``ok``."""
        headers = dict(self.headers)
        if key is not None:
            headers["Idempotency-Key"] = key
        deadline = time.monotonic() + patience
        while True:
            try:
                answer = self.world.http.request(method, f"{self.world.web}{path}",
                                                 json=body, headers=headers)
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
                continue
            if answer.status_code in ok:
                return answer
            if answer.status_code in RETRY_STATUSES and time.monotonic() < deadline:
                time.sleep(min(5.0, float(answer.headers.get("retry-after") or 1)))
                continue
            raise RuntimeError(f"{self.name} {method} {path}: {answer.status_code} "
                               f"{answer.text[:300]}")

    # -- joining --------------------------------------------------------------------------

    def sign_in(self) -> None:
        """Sign in with an emailed code (read from the stack's log: no mail server), then
        confirm with a second code and mint an API key that may move money, which the
        follower's script uses from then on (the session keeps what only it may do)."""
        self.email = f"soak-{self.number}-{secrets.token_hex(3)}@example.com"
        self.call("POST", "/api/auth/magic", {"email": self.email})
        code = self.world.next_code(self.email, 0)
        token = self.call("POST", "/api/auth/verify-code",
                          {"email": self.email, "code": code}).json()["token"]
        self.session = self.headers = {"Authorization": f"Bearer {token}"}
        self.call("POST", "/api/auth/magic", {"email": self.email, "purpose": "step_up"})
        code = self.world.next_code(self.email, 1)
        step_up = self.call("POST", "/api/auth/step-up", {"code": code}).json()
        self.headers = {**self.session, "X-Step-Up-Token": step_up["step_up_token"]}
        key = self.call("POST", "/api/keys", {
            "name": "soak", "expires_in_days": 0,
            "scopes": ["read:account", "read:positions", "read:trades", "read:markets",
                       "trade:execute", "trade:cancel", "wallet:write"]}).json()
        self.headers = {"Authorization": f"Bearer {key['secret']}"}

    def open_account(self) -> None:
        """Ask for the deposit address (onboarding starts)."""
        self.call("GET", "/api/wallets/deposit-address")

    def wait_ready(self, timeout: float = 240) -> None:
        """Until onboarding has deployed the deposit wallet and taken venue credentials."""
        deadline = time.monotonic() + timeout
        while not (account := self.call("GET", "/api/trading-account").json())["ready"]:
            if account["status"] == "failed":
                self.call("POST", "/api/trading-account/onboarding")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} never became ready: {account}")
            time.sleep(1)
        self.maker = account["account"]["wallet_address"]

    def deposit(self) -> None:
        """Fund the deposit wallet on the chain and wait until the app sees it."""
        self.funds = Decimal(self.profile.get("funds", DEFAULT_FUNDS))
        self.world.fund(self.maker, self.funds)
        deadline = time.monotonic() + 120
        while Decimal(self.call("GET", "/api/helpers/trading-readiness").json()
                      .get("balance_usdc") or 0) < self.funds:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}'s deposit never showed")
            time.sleep(1)

    def subscribe(self, url: str) -> None:
        """A webhook channel for every notification, at the soak's receiver."""
        key, self.headers = self.headers, self.session  # channels take a session
        try:
            self.channel_id = self.call("POST", "/api/notifications/channels", {
                "kind": "webhook", "url": url, "label": f"soak {self.name}"}).json()["id"]
        finally:
            self.headers = key

    def copy(self) -> None:
        """Preview, create and start the follower's live config on its whale."""
        if self.profile.get("exposure"):
            self.call("PUT", "/api/users/me/limits",
                      {"max_total_exposure_usdc": self.profile["exposure"]})
        preview = self.call("POST", "/api/configs/preview", {
            "target_address": self.target, "paper_trading": False,
            "target_name": f"whale for {self.profile['name']}",
            **self.profile["rules"]}).json()
        created = self.call("POST", "/api/configs", {"preview_id": preview["preview_id"]},
                            key=str(uuid.uuid4())).json()
        self.config_id = created["id"]
        self.call("POST", f"/api/configs/{self.config_id}/start")

    # -- living ---------------------------------------------------------------------------

    def trade_by_hand(self, token_id: str, size: int) -> None:
        """A small market buy, sent twice with one Idempotency-Key (a client retrying after
        its answer was lost): the second answers the first's result."""
        try:
            preview = self.call("POST", "/api/markets/order/preview", {
                "token_id": token_id, "side": "buy", "size": str(size),
                "order_type": "market"}).json()
        except RuntimeError:
            self.done["manual order refused"] += 1  # a closed market, an empty book
            return
        key = str(uuid.uuid4())
        body = {"token_id": token_id, "side": "buy", "size": preview["size"],
                "order_type": "market", "preview_id": preview["preview_id"]}
        answers = []
        for _ in range(2):
            answer = self.call("POST", "/api/markets/order", body, key=key,
                               ok=(200, 201, 400, 402, 409, 422, 503))
            answers.append(answer.status_code)
        self.order_keys.append(key)
        self.done["manual order" if answers[0] < 300 else "manual order refused"] += 1

    def claim(self) -> None:
        """Claim every resolved position there is."""
        answer = self.call("POST", "/api/positions/claim", {}, key=str(uuid.uuid4()),
                           ok=(200, 201, 202, 400, 402, 409, 422))
        self.done["claim" if answer.status_code < 300 else "claim refused"] += 1

    def withdraw(self, amount: Decimal) -> None:
        """Withdraw ``amount`` pUSD to a fresh address (so its balance shows what arrived)."""
        to = "0x" + secrets.token_hex(20)
        answer = self.call("POST", "/api/trading-wallet/withdraw", {
            "to_address": to, "amount": str(amount), "token": "usdc"},
            key=str(uuid.uuid4()), ok=(200, 201, 202, 400, 402, 409, 422))
        if answer.status_code < 300:
            self.withdrawals.append((to, str(answer.json()["withdrawal_id"]), amount))
            self.done["withdrawal"] += 1
        else:
            self.done["withdrawal refused"] += 1
