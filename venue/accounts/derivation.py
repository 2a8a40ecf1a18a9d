"""Counterfactual wallet addresses (CREATE2): deposit wallets (beacon and UUPS), proxy, Safe.

ACCOUNTS.md §2.2: ``args = abi.encode(factory, bytes32(owner))``, ``salt = keccak(args)``,
and the init code of a Solady LibClone ERC-1967 proxy (UUPS) or ERC-1967 beacon proxy with
``args`` appended. The bytecode constants are LibClone's, as the official SDK writes them
(``polymarket/_internal/wallet.py``); tests compare every address with the SDK's.
"""

from __future__ import annotations

from eth_hash.auto import keccak
from eth_utils import to_checksum_address

from venue.accounts.contracts import POLYGON, AccountContracts
from venue.accounts.words import address_bytes, address_word

# LibClone.initCodeHashERC1967(implementation, args)
_ERC1967_PREFIX_BASE = 0x61003D3D8160233D3973
_ERC1967_MIDDLE = bytes.fromhex("6009")
_ERC1967_CONST2 = bytes.fromhex("5155f3363d3d373d3d363d7f360894a13ba1a3210667c828492db98dca3e2076")
_ERC1967_CONST1 = bytes.fromhex("cc3735a920a3ca505d382bbc545af43d6000803e6038573d6000fd5b3d6000f3")
# LibClone.initCodeHashERC1967BeaconProxy(beacon, args)
_BEACON_PREFIX_BASE = 0x6100523D8160233D3973
_BEACON_CONST3 = bytes.fromhex("60195155f3363d3d373d3d363d602036600436635c60da")
_BEACON_CONST2 = bytes.fromhex("1b60e01b36527fa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6c")
_BEACON_CONST1 = bytes.fromhex("b3582b35133d50545afa5036515af43d6000803e604d573d6000fd5b3d6000f3")
# Polymarket's proxy-wallet factory clone (type 1): factory and implementation spliced in.
_PROXY_BYTECODE = (
    "3d3d606380380380913d393d73{factory}"
    "5af4602a57600080fd5b602d8060366000396000f3363d3d373d3d3d363d73{impl}"
    "5af43d82803e903d91602b57fd5bf352e831dd"
    + "00" * 31 + "20" + "00" * 32
)


def create2_address(deployer: str, salt: bytes, init_code_hash: bytes) -> str:
    """Checksummed CREATE2 address: keccak(0xff ‖ deployer ‖ salt ‖ initCodeHash)[12:]."""
    return to_checksum_address(
        keccak(b"\xff" + address_bytes(deployer) + salt + init_code_hash)[12:])


def deposit_wallet_args(owner: str, factory: str) -> bytes:
    """The clone's immutable args: ``abi.encode(factory, bytes32(owner))`` (the walletId)."""
    return address_word(factory) + address_word(owner)


def _with_length(base: int, args: bytes) -> bytes:
    # LibClone folds the args' length into the 10-byte prefix (its PUSH2 of the code size).
    return (base + (len(args) << 56)).to_bytes(10, "big")


def uups_init_code_hash(implementation: str, args: bytes) -> bytes:
    """LibClone ``initCodeHashERC1967(implementation, args)``."""
    return keccak(_with_length(_ERC1967_PREFIX_BASE, args) + address_bytes(implementation)
                  + _ERC1967_MIDDLE + _ERC1967_CONST2 + _ERC1967_CONST1 + args)


def beacon_init_code_hash(beacon: str, args: bytes) -> bytes:
    """LibClone ``initCodeHashERC1967BeaconProxy(beacon, args)``."""
    return keccak(_with_length(_BEACON_PREFIX_BASE, args) + address_bytes(beacon)
                  + _BEACON_CONST3 + _BEACON_CONST2 + _BEACON_CONST1 + args)


def uups_deposit_wallet_address(owner: str, contracts: AccountContracts = POLYGON) -> str:
    """The deposit wallet ``owner`` has (or gets) as a UUPS clone (factories before 2026-06-29)."""
    args = deposit_wallet_args(owner, contracts.deposit_wallet_factory)
    return create2_address(contracts.deposit_wallet_factory, keccak(args),
                           uups_init_code_hash(contracts.deposit_wallet_implementation, args))


def beacon_deposit_wallet_address(owner: str, contracts: AccountContracts = POLYGON) -> str:
    """The deposit wallet ``owner`` has (or gets) as a beacon-proxy clone (current factory)."""
    args = deposit_wallet_args(owner, contracts.deposit_wallet_factory)
    return create2_address(contracts.deposit_wallet_factory, keccak(args),
                           beacon_init_code_hash(contracts.deposit_wallet_beacon, args))


def resolve_deposit_wallet_address(owner: str, *, factory_has_beacon: bool,
                                   uups_has_code: bool,
                                   contracts: AccountContracts = POLYGON) -> str:
    """The docs' rule (§2.2): UUPS if the factory has no beacon or the UUPS clone already
    exists, else the beacon clone. The two facts are read from the chain by the caller."""
    if not factory_has_beacon or uups_has_code:
        return uups_deposit_wallet_address(owner, contracts)
    return beacon_deposit_wallet_address(owner, contracts)


def proxy_wallet_address(owner: str, contracts: AccountContracts = POLYGON) -> str:
    """The legacy proxy wallet (type 1, Magic/email accounts) of ``owner``."""
    bytecode = bytes.fromhex(_PROXY_BYTECODE.format(
        factory=address_bytes(contracts.proxy_factory).hex(),
        impl=address_bytes(contracts.proxy_implementation).hex()))
    # The proxy factory salts with the packed (20-byte) owner address.
    return create2_address(contracts.proxy_factory, keccak(address_bytes(owner)),
                           keccak(bytecode))


def safe_wallet_address(owner: str, contracts: AccountContracts = POLYGON) -> str:
    """The legacy 1-of-1 Safe (type 2, browser-wallet accounts) of ``owner``."""
    return create2_address(contracts.safe_factory, keccak(address_word(owner)),
                           bytes.fromhex(contracts.safe_init_code_hash.removeprefix("0x")))


__all__ = [
    "beacon_deposit_wallet_address",
    "beacon_init_code_hash",
    "create2_address",
    "deposit_wallet_args",
    "proxy_wallet_address",
    "resolve_deposit_wallet_address",
    "safe_wallet_address",
    "uups_deposit_wallet_address",
    "uups_init_code_hash",
]
