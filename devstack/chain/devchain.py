"""The local development chain: anvil from npm, our stand-in contracts, and oracle helpers.

Used by the test suite's `chain` fixture and by `copytrade up` when anvil is installed.
Contracts deployed here speak the same ABI subset as Polymarket's on Polygon, and produce
the same condition, collection and position ids.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import requests
from eth_utils import keccak
from web3 import Web3

from devstack import ctf
from devstack.chain.compile import Artifact, compile_contracts
from devstack.chain.errors import DevChainError
from devstack.chain.transact import (
    address_of,
    checksum,
    connect,
    fee_caps,
    send_and_wait,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CHAIN_ID = 31337
ANVIL_START_TIMEOUT = 30.0


@dataclass(frozen=True)
class DevAccount:
    """A funded anvil account (from anvil's well-known test mnemonic)."""

    address: str
    private_key: str


def _native_package_binary() -> Path | None:
    # the npm wrapper (node_modules/.bin/anvil) is a node script that spawns this binary;
    # running the binary itself means stop() signals anvil directly, not a node parent
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if not system or not arch:
        return None
    name = "anvil.exe" if system == "win32" else "anvil"
    path = REPO_ROOT / "node_modules" / "@foundry-rs" / f"anvil-{system}-{arch}" / "bin" / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


def find_anvil() -> str | None:
    """Locate anvil: $ANVIL_BIN, the npm package's binary, node_modules/.bin, then PATH."""
    explicit = os.environ.get("ANVIL_BIN")
    if explicit:
        return explicit if shutil.which(explicit) else None
    native = _native_package_binary()
    if native is not None:
        return str(native)
    wrapper = REPO_ROOT / "node_modules" / ".bin" / "anvil"
    if wrapper.exists() and shutil.which("node"):
        return str(wrapper)
    return shutil.which("anvil")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def die_with_parent() -> None:
    """``preexec_fn`` of a child process: Linux SIGTERMs it when its parent dies (no-op else)."""
    # So a test process that dies without stop() leaves no anvil (or worker) behind. The
    # signal follows the spawning *thread*, so arm it only from the main thread.
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class AnvilProcess:
    """A running anvil node on 127.0.0.1; stop() it (or use it as a context manager)."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        port: int,
        chain_id: int,
        accounts: list[DevAccount],
        workdir: str,
    ) -> None:
        self.process = process
        self.port = port
        self.chain_id = chain_id
        self.accounts = accounts
        self.rpc_url = f"http://127.0.0.1:{port}"
        self._workdir = workdir

    def web3(self) -> Web3:
        """Return a Web3 connected to this node."""
        return connect(self.rpc_url)

    @property
    def running(self) -> bool:
        """Tell whether the process is still alive."""
        return self.process.poll() is None

    def stop(self) -> None:
        """Terminate anvil (kill it if it lingers) and remove its scratch files."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        shutil.rmtree(self._workdir, ignore_errors=True)

    def __enter__(self) -> AnvilProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_anvil(
    port: int | None = None,
    *,
    block_time: float | None = None,
    chain_id: int = DEFAULT_CHAIN_ID,
    timeout: float = ANVIL_START_TIMEOUT,
) -> AnvilProcess:
    """Start anvil on a free (or the given) port and return once its JSON-RPC answers."""
    binary = find_anvil()
    if binary is None:
        raise DevChainError("anvil not found: run `npm install` (package @foundry-rs/anvil)")
    attempts = 1 if port is not None else 3
    last_error: DevChainError | None = None
    for _ in range(attempts):
        try:
            return _start_once(binary, port or _free_port(), block_time, chain_id, timeout)
        except DevChainError as exc:
            # a free port can be taken between probing and binding; try another
            last_error = exc
    assert last_error is not None
    raise last_error


def _start_once(
    binary: str, port: int, block_time: float | None, chain_id: int, timeout: float
) -> AnvilProcess:
    workdir = tempfile.mkdtemp(prefix="anvil-")
    config_out = Path(workdir) / "config.json"
    log_path = Path(workdir) / "anvil.log"
    args = [
        binary,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--chain-id", str(chain_id),
        "--config-out", str(config_out),
        "--quiet",  # errors still reach the log; per-request lines would grow it forever
    ]  # fmt: skip
    if block_time is not None:
        args += ["--block-time", str(block_time)]
    arm_death_signal = (
        sys.platform == "linux" and threading.current_thread() is threading.main_thread()
    )
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent if arm_death_signal else None,
        )
    anvil = AnvilProcess(process, port, chain_id, [], workdir)
    w3 = connect(anvil.rpc_url, timeout=2)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            anvil.stop()
            raise DevChainError(f"anvil exited with code {process.returncode}: {tail}")
        with contextlib.suppress(requests.RequestException):
            if int(w3.eth.chain_id) == chain_id and config_out.is_file():
                config = json.loads(config_out.read_text())
                break
        if time.monotonic() >= deadline:
            anvil.stop()
            raise DevChainError(f"anvil did not answer on port {port} within {timeout}s")
        time.sleep(0.05)
    anvil.accounts = [
        DevAccount(address=checksum(address), private_key=key)
        for address, key in zip(config["available_accounts"], config["private_keys"], strict=True)
    ]
    return anvil


# ---- contracts ------------------------------------------------------------------------


@dataclass(frozen=True)
class DevCondition:
    """A prepared condition and the token id of each outcome (index set 1 << i order)."""

    question_id: str
    condition_id: str
    outcome_slot_count: int
    collateral: str
    token_ids: list[int]
    neg_risk: bool = False
    market_id: str | None = None


@dataclass
class DevContracts:
    """Addresses of the contracts on a dev chain, plus oracle and funding helpers."""

    rpc_url: str
    chain_id: int
    deployer_key: str
    pusd: str
    usdce: str
    ctf: str
    ctf_exchange: str
    neg_risk_exchange: str
    neg_risk_adapter: str
    wrapped_collateral: str
    # deposit wallets (ACCOUNTS.md 2): the factory deploys beacon-proxy clones of the implementation
    deposit_wallet_factory: str
    deposit_wallet_beacon: str
    deposit_wallet_implementation: str
    # pUSD's collateral plumbing (ACCOUNTS.md 6): USDC.e <-> pUSD, and redemptions paying pUSD
    collateral_onramp: str
    collateral_offramp: str  # not in env(): ARCHITECTURE.md names no variable for it yet
    ctf_collateral_adapter: str
    neg_risk_collateral_adapter: str
    native_usdc: str = ""  # Circle's native USDC stand-in: the venue cannot trade it
    # protocol-v2 positions (ACCOUNTS.md §11): ERC-1155 positions and the Router redeeming them
    position_manager: str = ""
    protocol_v2_router: str = ""
    _w3: Web3 | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def deployer(self) -> str:
        """The deployer's address: token owner, CTF oracle, adapter admin, factory operator."""
        return address_of(self.deployer_key)

    def env(self) -> dict[str, str]:
        """Return the ARCHITECTURE.md environment variables that point the app at this chain."""
        return {
            "POLYGON_RPC_URL": self.rpc_url,
            "CHAIN_ID": str(self.chain_id),
            "PUSD_ADDRESS": self.pusd,
            "USDCE_ADDRESS": self.usdce,
            "CTF_ADDRESS": self.ctf,
            "CTF_EXCHANGE_ADDRESS": self.ctf_exchange,
            "NEG_RISK_EXCHANGE_ADDRESS": self.neg_risk_exchange,
            "NEG_RISK_ADAPTER_ADDRESS": self.neg_risk_adapter,
            "DEPOSIT_WALLET_FACTORY_ADDRESS": self.deposit_wallet_factory,
            "DEPOSIT_WALLET_BEACON_ADDRESS": self.deposit_wallet_beacon,
            "COLLATERAL_ONRAMP_ADDRESS": self.collateral_onramp,
            "CTF_COLLATERAL_ADAPTER_ADDRESS": self.ctf_collateral_adapter,
            "NEG_RISK_COLLATERAL_ADAPTER_ADDRESS": self.neg_risk_collateral_adapter,
            "NATIVE_USDC_ADDRESS": self.native_usdc,
            "POSITION_MANAGER_ADDRESS": self.position_manager,
            "PROTOCOL_V2_ROUTER_ADDRESS": self.protocol_v2_router,
            # the sandbox's operator sends the match settlements (chain_settlement.py): the
            # only sender whose pending match calls the copy engine believes
            "COPY_PENDING_OPERATORS": self.deployer,
        }

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able description (to hand the chain to another process)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DevContracts:
        """Rebuild from to_dict()'s output."""
        return cls(**{k: v for k, v in data.items() if not k.startswith("_")})

    def web3(self) -> Web3:
        """Return a (cached) Web3 connected to the dev chain."""
        if self._w3 is None:
            self._w3 = connect(self.rpc_url)
        return self._w3

    # -- plumbing --

    def _contract(self, name: str, address: str) -> Any:
        return self.web3().eth.contract(address=address, abi=_artifacts()[name].abi)

    def _send(self, to: str, data: bytes | str, value: int = 0) -> None:
        """Send a transaction from the deployer and require that it succeeds."""
        raw_data = Web3.to_bytes(hexstr=data) if isinstance(data, str) else data
        # one nonce sequence for the deployer: callers may share these contracts across threads
        with self._lock:
            send_and_wait(self.web3(), self.deployer_key,
                          {"to": checksum(to), "data": "0x" + raw_data.hex(), "value": value,
                           "chainId": self.chain_id})

    def _call_data(self, name: str, address: str, function: str, *args: Any) -> str:
        return self._contract(name, address).encode_abi(function, args=list(args))

    # -- funding --

    def mint(self, token: str, to: str, amount_base_units: int) -> None:
        """Mint a dev token (pUSD or USDC.e) to an address, in base units."""
        data = self._call_data("DevToken", token, "mint", checksum(to), amount_base_units)
        self._send(token, data)

    def token_decimals(self, token: str) -> int:
        """Return a dev token's decimals() as the contract reports them."""
        return int(self._contract("DevToken", checksum(token)).functions.decimals().call())

    def native_balance_wei(self, owner: str) -> int:
        """Return an address's native (MATIC) balance in wei."""
        return int(self.web3().eth.get_balance(checksum(owner)))

    def fund_native(self, to: str, wei: int) -> None:
        """Set an address's native (MATIC) balance to exactly `wei` (anvil_setBalance)."""
        response = self.web3().provider.make_request(
            "anvil_setBalance",  # type: ignore[arg-type]
            [checksum(to), hex(wei)],
        )
        if response.get("error"):
            raise DevChainError(f"anvil_setBalance failed: {response['error']}")

    # -- deposit wallets, the deployer as the factory's operator --

    def deposit_wallet_address(self, owner: str) -> str:
        """Return the address `owner`'s deposit wallet has (or will have)."""
        factory = self._contract("DepositWalletFactory", self.deposit_wallet_factory)
        return checksum(factory.functions.predictWalletAddress(checksum(owner)).call())

    def deploy_deposit_wallet(self, owner: str) -> str:
        """Deploy `owner`'s deposit wallet as the relayer would (WALLET-CREATE); return it."""
        data = self._call_data(
            "DepositWalletFactory", self.deposit_wallet_factory, "deploy", checksum(owner)
        )
        self._send(self.deposit_wallet_factory, data)
        return self.deposit_wallet_address(owner)

    # -- plain CTF conditions, the deployer as oracle --

    def prepare_condition(
        self,
        question_id: bytes | str | None = None,
        outcome_slot_count: int = 2,
        *,
        collateral: str | None = None,
    ) -> DevCondition:
        """Prepare a condition with the deployer as oracle; a random question id by default."""
        qid = _as_b32(question_id if question_id is not None else os.urandom(32))
        collateral = checksum(collateral or self.usdce)
        self._send(
            self.ctf,
            self._call_data(
                "ConditionalTokens", self.ctf, "prepareCondition",
                self.deployer, qid, outcome_slot_count,
            ),
        )  # fmt: skip
        cid = ctf.condition_id(self.deployer, "0x" + qid.hex(), outcome_slot_count)
        return DevCondition(
            question_id="0x" + qid.hex(),
            condition_id=cid,
            outcome_slot_count=outcome_slot_count,
            collateral=collateral,
            token_ids=_outcome_token_ids(collateral, cid, outcome_slot_count),
        )

    def resolve_condition(self, question_id: bytes | str, payouts: Sequence[int]) -> None:
        """Report payouts (one numerator per outcome) for a question as the oracle."""
        data = self._call_data(
            "ConditionalTokens", self.ctf, "reportPayouts", _as_b32(question_id), list(payouts)
        )
        self._send(self.ctf, data)

    # -- neg-risk questions, the adapter as oracle --

    def prepare_neg_risk_question(self, market_id: bytes | str | None = None) -> DevCondition:
        """Prepare a neg-risk question (and a new market unless market_id is given)."""
        adapter = self._contract("NegRiskAdapter", self.neg_risk_adapter)
        if market_id is None:
            metadata = os.urandom(16)
            data = self._call_data(
                "NegRiskAdapter", self.neg_risk_adapter, "prepareMarket", 0, metadata
            )
            self._send(self.neg_risk_adapter, data)
            raw_id = keccak(
                Web3().codec.encode(["address", "uint256", "bytes"], [self.deployer, 0, metadata])
            )
            market = raw_id[:31] + b"\x00"
        else:
            market = _as_b32(market_id)
        index = int(adapter.functions.questionCount(market).call())
        data = self._call_data(
            "NegRiskAdapter", self.neg_risk_adapter, "prepareQuestion", market, b""
        )
        self._send(self.neg_risk_adapter, data)
        qid = market[:31] + bytes([index])
        cid = ctf.condition_id(self.neg_risk_adapter, "0x" + qid.hex(), 2)
        return DevCondition(
            question_id="0x" + qid.hex(),
            condition_id=cid,
            outcome_slot_count=2,
            collateral=self.wrapped_collateral,
            token_ids=_outcome_token_ids(self.wrapped_collateral, cid, 2),
            neg_risk=True,
            market_id="0x" + market.hex(),
        )

    def resolve_neg_risk_question(self, question_id: bytes | str, outcome: bool) -> None:
        """Report a neg-risk question's outcome through the adapter (True: yes wins)."""
        data = self._call_data(
            "NegRiskAdapter", self.neg_risk_adapter, "reportOutcome", _as_b32(question_id), outcome
        )
        self._send(self.neg_risk_adapter, data)

    # -- giving wallets outcome tokens --

    def split_position(
        self,
        to: str,
        condition: DevCondition,
        amount_base_units: int,
        *,
        outcomes: Sequence[int] | None = None,
    ) -> None:
        """Give `to` amount of each chosen outcome's token (all by default); it needs no gas.

        The deployer mints collateral, splits it into a full set, and transfers the chosen
        outcomes' tokens to `to`; the rest stay with the deployer.
        """
        chosen = list(range(condition.outcome_slot_count)) if outcomes is None else list(outcomes)
        if condition.neg_risk:
            self.mint(self.usdce, self.deployer, amount_base_units)
            approve = self._call_data(
                "DevToken", self.usdce, "approve", self.neg_risk_adapter, amount_base_units
            )
            self._send(self.usdce, approve)
            self._send(
                self.neg_risk_adapter,
                self._call_data(
                    "NegRiskAdapter", self.neg_risk_adapter, "splitPosition",
                    _as_b32(condition.condition_id), amount_base_units,
                ),
            )  # fmt: skip
        else:
            collateral = condition.collateral
            self.mint(collateral, self.deployer, amount_base_units)
            self._send(
                collateral,
                self._call_data("DevToken", collateral, "approve", self.ctf, amount_base_units),
            )
            partition = [1 << i for i in range(condition.outcome_slot_count)]
            self._send(
                self.ctf,
                self._call_data(
                    "ConditionalTokens", self.ctf, "splitPosition",
                    collateral, b"\x00" * 32, _as_b32(condition.condition_id), partition,
                    amount_base_units,
                ),
            )  # fmt: skip
        if checksum(to) != self.deployer and chosen:
            token_ids = [condition.token_ids[i] for i in chosen]
            self._send(
                self.ctf,
                self._call_data(
                    "ConditionalTokens", self.ctf, "safeBatchTransferFrom",
                    self.deployer, checksum(to), token_ids, [amount_base_units] * len(token_ids),
                    b"",
                ),
            )  # fmt: skip


    # -- protocol-v2 positions (the Router's conditions, the deployer as oracle) --

    def split_v2_position(self, to: str, position_ids: Sequence[int | str],
                          amount_base_units: int, *, outcomes: Sequence[int] = (0, 1)) -> None:
        """Give `to` amount of each chosen outcome of a protocol-v2 condition (named by its two
        position ids): the deployer splits minted pUSD through the Router and transfers."""
        condition = _condition31(position_ids[0])
        self.mint(self.pusd, self.deployer, amount_base_units)
        self._send(self.pusd, self._call_data("DevToken", self.pusd, "approve",
                                              self.protocol_v2_router, amount_base_units))
        self._send(self.protocol_v2_router, self._call_data(
            "ProtocolV2Router", self.protocol_v2_router, "split", condition, amount_base_units))
        if checksum(to) != self.deployer:
            for outcome in outcomes:
                self._send(self.position_manager, self._call_data(
                    "PositionManager", self.position_manager, "safeTransferFrom", self.deployer,
                    checksum(to), int(position_ids[outcome]), amount_base_units, b""))

    def resolve_v2(self, position_id: int | str, payouts: Sequence[int]) -> None:
        """Report a protocol-v2 condition's payouts (one numerator per outcome) as its oracle."""
        self._send(self.protocol_v2_router, self._call_data(
            "ProtocolV2Router", self.protocol_v2_router, "reportPayouts",
            _condition31(position_id), list(payouts)))

    def v2_balance(self, owner: str, position_id: int | str) -> int:
        """A protocol-v2 position's balance (base units) held by `owner`."""
        manager = self._contract("PositionManager", self.position_manager)
        return int(manager.functions.balanceOf(checksum(owner), int(position_id)).call())


def _condition31(position_id: int | str) -> bytes:
    # a position id is its condition's 31 bytes, then the outcome byte
    return (int(position_id) >> 8).to_bytes(31, "big")


def _outcome_token_ids(collateral: str, condition_id: str, outcome_slot_count: int) -> list[int]:
    # one outcome per index set 1 << i, in outcome order
    return [ctf.position_id(collateral, condition_id, 1 << i) for i in range(outcome_slot_count)]


def _as_b32(value: bytes | str) -> bytes:
    raw = Web3.to_bytes(hexstr=value) if isinstance(value, str) else bytes(value)
    if len(raw) != 32:
        raise ValueError(f"expected 32 bytes, got {len(raw)}")
    return raw


_artifact_cache: dict[str, Artifact] = {}


def _artifacts() -> dict[str, Artifact]:
    if not _artifact_cache:
        _artifact_cache.update(compile_contracts())
    return _artifact_cache


def _deploy(w3: Web3, deployer_key: str, chain_id: int, name: str, *args: Any) -> str:
    """Deploy one compiled contract from the deployer and return its address."""
    artifact = _artifacts()[name]
    factory = w3.eth.contract(abi=artifact.abi, bytecode=artifact.bytecode)
    deployer = address_of(deployer_key)
    tx = factory.constructor(*args).build_transaction(
        {
            "from": deployer,
            "nonce": int(w3.eth.get_transaction_count(deployer, "pending")),
            "chainId": chain_id,
            **fee_caps(w3),
        }
    )
    try:
        receipt = send_and_wait(w3, deployer_key, dict(tx))
    except DevChainError as exc:
        raise DevChainError(f"deploying {name} failed") from exc
    if not receipt["contractAddress"]:
        raise DevChainError(f"deploying {name} failed")
    return checksum(receipt["contractAddress"])


def deploy_dev_contracts(rpc_url: str, deployer_key: str) -> DevContracts:
    """Deploy the tokens, the CTF, the adapters, the onramp and the deposit-wallet factory."""
    w3 = connect(rpc_url)
    chain_id = int(w3.eth.chain_id)
    pusd = _deploy(w3, deployer_key, chain_id, "DevToken", "Polymarket USD", "pUSD", 6)
    usdce = _deploy(w3, deployer_key, chain_id, "DevToken", "USD Coin (PoS)", "USDC.e", 6)
    ctf = _deploy(w3, deployer_key, chain_id, "ConditionalTokens")
    # like Polymarket's adapter, it wraps USDC.e, so redemptions pay out USDC.e
    adapter = _deploy(w3, deployer_key, chain_id, "NegRiskAdapter", ctf, usdce)
    adapter_contract = w3.eth.contract(address=adapter, abi=_artifacts()["NegRiskAdapter"].abi)
    offramp = _deploy(w3, deployer_key, chain_id, "CollateralOfframp", pusd, usdce)
    onramp = _deploy(w3, deployer_key, chain_id, "CollateralOnramp", pusd, usdce, offramp)
    for ramp in (onramp, offramp):
        _transact(w3, deployer_key, chain_id, "DevToken", pusd, "setMinter", ramp, True)
    ctf_collateral_adapter = _deploy(
        w3, deployer_key, chain_id, "CtfCollateralAdapter", ctf, pusd, usdce, onramp
    )
    neg_risk_collateral_adapter = _deploy(
        w3, deployer_key, chain_id, "NegRiskCtfCollateralAdapter",
        ctf, adapter, pusd, usdce, onramp,
    )  # fmt: skip
    implementation = _deploy(w3, deployer_key, chain_id, "DepositWallet")
    beacon = _deploy(w3, deployer_key, chain_id, "DepositWalletBeacon", implementation)
    # the deployer plays the relayer's operator until a sandbox relayer takes its own key
    factory = _deploy(
        w3, deployer_key, chain_id, "DepositWalletFactory", beacon, address_of(deployer_key)
    )
    # last, so every other contract keeps the address it had before this token existed
    native_usdc = _deploy(w3, deployer_key, chain_id, "DevToken", "USD Coin", "USDC", 6)
    # the exchanges the sandbox venue settles its trades on (the deployer is their operator);
    # they turn pUSD into USDC.e and back for split and merge, so they mint both
    exchanges = [_deploy(w3, deployer_key, chain_id, "CTFExchange", ctf, pusd, usdce, adapter)
                 for _ in range(2)]
    for exchange in exchanges:
        for token in (pusd, usdce):
            _transact(w3, deployer_key, chain_id, "DevToken", token, "setMinter", exchange, True)
    # protocol-v2 positions and their Router (after the rest: earlier addresses stay put)
    position_manager = _deploy(w3, deployer_key, chain_id, "PositionManager")
    router = _deploy(w3, deployer_key, chain_id, "ProtocolV2Router", position_manager, pusd)
    _transact(w3, deployer_key, chain_id, "PositionManager", position_manager, "setRouter", router)
    return DevContracts(
        rpc_url=rpc_url,
        chain_id=chain_id,
        deployer_key=deployer_key,
        pusd=pusd,
        usdce=usdce,
        ctf=ctf,
        ctf_exchange=exchanges[0],
        neg_risk_exchange=exchanges[1],
        neg_risk_adapter=adapter,
        wrapped_collateral=checksum(adapter_contract.functions.wcol().call()),
        deposit_wallet_factory=factory,
        deposit_wallet_beacon=beacon,
        deposit_wallet_implementation=implementation,
        collateral_onramp=onramp,
        collateral_offramp=offramp,
        ctf_collateral_adapter=ctf_collateral_adapter,
        neg_risk_collateral_adapter=neg_risk_collateral_adapter,
        native_usdc=native_usdc,
        position_manager=position_manager,
        protocol_v2_router=router,
    )


def _transact(
    w3: Web3, sender_key: str, chain_id: int, name: str, address: str, function: str, *args: Any
) -> None:
    """Call a state-changing function of a deployed contract and require that it succeeds."""
    contract = w3.eth.contract(address=checksum(address), abi=_artifacts()[name].abi)
    data = contract.encode_abi(function, args=list(args))
    send_and_wait(w3, sender_key, {"to": checksum(address), "data": data, "chainId": chain_id})
