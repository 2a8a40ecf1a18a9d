"""The venue's view of accounts: deposit wallets and who controls them, Batch nonces,
ERC-20 allowances, ERC-1155 operator approvals, USDC.e, and the CLOB's cached
balance/allowance (ACCOUNTS.md §2, §5, §6).

A deposit wallet's address is derived as the venue's factory deploys it (§2.2, beacon
clones); the relayer registers wallets it deployed, the control API registers others. The
CLOB answers ``/balance-allowance`` from a cache that sees the venue's own trades at once but
money that moved on chain (a deposit, a wrap, a transfer out) only after
``/balance-allowance/update``: ``unseen`` holds those movements until then.

Not locked here: the sandbox state's lock guards every call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eth_utils import keccak, to_checksum_address

from devstack.ctf import is_protocol_position_id
from devstack.venue.config import SandboxConfig

MAX_UINT = 2**256 - 1
COLLATERAL_ASSET = ""  # the `unseen` key of pUSD; outcome tokens use their token id

# LibClone.initCodeERC1967BeaconProxy(beacon, args) around the beacon address (§2.2).
_BEACON_HEAD = bytes.fromhex("3d8160233d3973")
_BEACON_TAIL = bytes.fromhex(
    "60195155f3363d3d373d3d363d602036600436635c60da"
    "1b60e01b36527fa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6c"
    "b3582b35133d50545afa5036515af43d6000803e604d573d6000fd5b3d6000f3")


def _word(address: str) -> bytes:
    return bytes.fromhex(address.removeprefix("0x").rjust(64, "0"))


def deposit_wallet_address(owner: str, factory: str, beacon: str) -> str:
    """The beacon-clone deposit wallet ``factory`` deploys for ``owner`` (CREATE2, §2.2)."""
    args = _word(factory) + _word(owner)
    init_code = ((0x610052 + len(args)).to_bytes(3, "big") + _BEACON_HEAD
                 + bytes.fromhex(beacon.removeprefix("0x")) + _BEACON_TAIL + args)
    digest = keccak(b"\xff" + bytes.fromhex(factory.removeprefix("0x")) + keccak(args)
                    + keccak(init_code))
    return to_checksum_address(digest[12:])


@dataclass
class DepositWallet:
    """One deposit wallet as the venue knows it (addresses lower-case)."""

    address: str
    owners: set[str]
    deployed: bool = True  # the factory made it (``/deployed`` answers true)
    registered: bool = True  # the relayer finished its wallet-registry update (CONFIRMED)
    nonce: int = 0
    session_signers: dict[str, int] = field(default_factory=dict)  # signer -> valid until
    # scopes given at ``/v1/session-signers/authorizations``; a signer authorized by a plain
    # batch has none recorded and counts as ``ALL`` (the wallet contract knows no scopes)
    scopes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # signers whose revocation the relayer accepted: out of use at once, before the chain
    # removes them (the venue's "fenced" revocation)
    fenced: set[str] = field(default_factory=set)

    def active_signers(self, now: float) -> set[str]:
        """Session signers whose authorization has not run out and was not revoked."""
        return {s for s, until in self.session_signers.items()
                if until > now and s not in self.fenced}

    def scopes_of(self, signer: str) -> tuple[str, ...]:
        """The scopes of a session signer (``ALL`` when none were given)."""
        return self.scopes.get(signer.lower(), ("ALL",))

    def clob_signers(self, now: float) -> set[str]:
        """Active session signers allowed to trade on the CLOB (scope ``CLOB`` or ``ALL``)."""
        return {s for s in self.active_signers(now)
                if {"CLOB", "ALL"} & set(self.scopes_of(s))}


class AccountRegistry:
    """Deposit wallets, approvals, USDC.e balances and the CLOB's balance/allowance cache."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.wallets: dict[str, DepositWallet] = {}
        self.allowances: dict[tuple[str, str, str], int] = {}  # (owner, token, spender)
        self.operators: set[tuple[str, str, str]] = set()  # (owner, token, operator)
        self.usdc_e: dict[str, int] = {}
        self.unseen: dict[tuple[str, str], int] = {}  # (address, asset) -> amount
        self.cached_allowances: dict[tuple[str, str], dict[str, int]] = {}
        # with a chain attached: each address's on-chain pUSD as of its last update
        self.chain_pusd: dict[str, int] = {}
        # makers the venue still takes outside the deposit-wallet flow (strict mode)
        self.allowlisted: set[str] = set()  # EOAs, type 0
        self.grandfathered: set[str] = set()  # proxy / Safe wallets, types 1 and 2
        # proxy (type 1) and Safe (type 2) wallets polymarket.com made: wallet -> (owner,
        # type); the venue knows their owner from its factories' CREATE2 addresses
        self.legacy_wallets: dict[str, tuple[str, int]] = {}
        # their relayer nonces (a proxy's relay-hub nonce, a Safe's ``nonce()``): wallet -> n
        self.legacy_nonces: dict[str, int] = {}

    # -- deposit wallets --

    def derive(self, owner: str) -> str:
        """The deposit wallet ``owner`` has (or will have) under the configured factory."""
        return deposit_wallet_address(owner, self.config.deposit_wallet_factory,
                                      self.config.deposit_wallet_beacon)

    def register_deposit_wallet(self, wallet: str, owner: str, *, registered: bool = True
                                ) -> DepositWallet:
        """Record ``owner`` (an EOA) as an owner of deposit wallet ``wallet``."""
        record = self.wallets.setdefault(wallet.lower(), DepositWallet(wallet.lower(), set()))
        record.owners.add(owner.lower())
        record.registered = registered
        return record

    def register_legacy_wallet(self, wallet: str, owner: str, signature_type: int) -> None:
        """Record ``owner`` as the owner of proxy (1) or Safe (2) wallet ``wallet``."""
        self.legacy_wallets[wallet.lower()] = (owner.lower(), signature_type)

    def legacy_wallet_of(self, owner: str, signature_type: int) -> str | None:
        """The proxy (1) or Safe (2) wallet ``owner`` owns, lower-case, if the venue knows
        one."""
        for wallet, known in self.legacy_wallets.items():
            if known == (owner.lower(), signature_type):
                return wallet
        return None

    def wallet(self, address: str) -> DepositWallet | None:
        """The deposit wallet at ``address``, if the venue knows one."""
        return self.wallets.get(address.lower())

    def wallet_controlled_by(self, address: str, now: float) -> DepositWallet | None:
        """The wallet ``address`` owns or is an active session signer of."""
        key = address.lower()
        for wallet in self.wallets.values():
            if key in wallet.owners or key in wallet.active_signers(now):
                return wallet
        return None

    def owners_of(self, wallet: str, now: float | None = None) -> set[str]:
        """Who may sign for a deposit wallet: its owners and, given ``now``, active session
        signers (lower-case; empty when it is none)."""
        record = self.wallets.get(wallet.lower())
        if record is None:
            legacy = self.legacy_wallets.get(wallet.lower())
            return {legacy[0]} if legacy else set()
        return record.owners | (record.active_signers(now) if now is not None else set())

    def wallets_of(self, address: str) -> set[str]:
        """The deposit wallets an address owns, lower-case."""
        return {w for w, record in self.wallets.items() if address.lower() in record.owners}

    def funder_for(self, address: str, signature_type: int, now: float) -> str:
        """The funding address behind an API-key address for a signature type."""
        if signature_type in (1, 2):
            legacy = self.legacy_wallet_of(address, signature_type)
            if legacy is not None:
                return legacy
        if signature_type in (1, 2, 3):
            wallet = self.wallet_controlled_by(address, now)
            if wallet is not None:
                return wallet.address
        return address.lower()

    # -- approvals and USDC.e --

    def allowance(self, owner: str, token: str, spender: str) -> int:
        """ERC-20 allowance ``owner`` granted ``spender`` on ``token``."""
        return self.allowances.get((owner.lower(), token.lower(), spender.lower()), 0)

    def approve(self, owner: str, token: str, spender: str, amount: int) -> None:
        """Set an ERC-20 allowance (as ``approve`` does: replace, not add)."""
        self.allowances[(owner.lower(), token.lower(), spender.lower())] = amount

    def spend_allowance(self, owner: str, token: str, spender: str, amount: int) -> bool:
        """Use ``amount`` of an allowance (max stays max); False when it is short."""
        have = self.allowance(owner, token, spender)
        if have < amount:
            return False
        if have != MAX_UINT:
            self.approve(owner, token, spender, have - amount)
        return True

    def approved_for_all(self, owner: str, token: str, operator: str) -> bool:
        """ERC-1155 ``isApprovedForAll``."""
        return (owner.lower(), token.lower(), operator.lower()) in self.operators

    def set_approval_for_all(self, owner: str, token: str, operator: str, approved: bool
                             ) -> None:
        """ERC-1155 ``setApprovalForAll``."""
        entry = (owner.lower(), token.lower(), operator.lower())
        if approved:
            self.operators.add(entry)
        else:
            self.operators.discard(entry)

    def usdc_e_balance(self, address: str) -> int:
        """USDC.e base units held by an address."""
        return self.usdc_e.get(address.lower(), 0)

    def credit_usdc_e(self, address: str, amount: int) -> int:
        """Add (or with a negative amount take) USDC.e; returns the new balance."""
        key = address.lower()
        self.usdc_e[key] = self.usdc_e.get(key, 0) + amount
        return self.usdc_e[key]

    # -- the CLOB's balance/allowance cache --

    def moved_on_chain(self, address: str, amount: int, asset: str = COLLATERAL_ASSET) -> None:
        """pUSD (or a token) that reached or left ``address`` outside the CLOB: its cached
        balance does not show it until the next ``/balance-allowance/update``."""
        key = (address.lower(), asset)
        self.unseen[key] = self.unseen.get(key, 0) + amount

    def cached_balance(self, address: str, live: int, asset: str = COLLATERAL_ASSET) -> int:
        """What the cache says of ``address``'s balance, given its live one."""
        return max(0, live - self.unseen.get((address.lower(), asset), 0))

    def cached_allowance_map(self, address: str, asset: str) -> dict[str, int]:
        """The cached allowances of ``address`` (read through once, then until an update)."""
        key = (address.lower(), asset)
        if key not in self.cached_allowances:
            self.cached_allowances[key] = self.live_allowances(address, asset)
        return dict(self.cached_allowances[key])

    def cache_spenders(self) -> tuple[str, ...]:
        """The spenders ``/balance-allowance`` reports: both exchanges and both collateral
        adapters (the configured ones, a dev chain's when attached)."""
        config = self.config
        return (config.exchange, config.neg_risk_exchange, config.ctf_collateral_adapter,
                config.neg_risk_collateral_adapter)

    def live_allowances(self, address: str, asset: str) -> dict[str, int]:
        """Allowances to the reported spenders now: pUSD amounts, or the operator flag as
        max on the CTF (a CTF token) or the PositionManager (a protocol-v2 position, whose
        orders settle on Exchange V3)."""
        config = self.config
        spenders = (*self.cache_spenders(), config.exchange_v3)
        if asset == COLLATERAL_ASSET:
            return {s: self.allowance(address, config.collateral, s) for s in spenders}
        holder = (config.position_manager if is_protocol_position_id(asset)
                  else config.conditional_tokens)
        return {s: MAX_UINT if self.approved_for_all(address, holder, s) else 0
                for s in spenders}

    def refresh(self, address: str, asset: str) -> None:
        """``/balance-allowance/update``: the cache catches up with the ledger and approvals."""
        self.unseen.pop((address.lower(), asset), None)
        self.cached_allowances[(address.lower(), asset)] = self.live_allowances(address, asset)
