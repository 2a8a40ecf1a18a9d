"""Deposit-wallet, proxy and Safe addresses: ours equal the official SDK's, byte for byte."""

from __future__ import annotations

import pytest

from tests.sdk_env import SDK_CONFIG, sdk_result
from tests.venue.accounts.conftest import OWNERS, TABLES, contracts_json
from venue.accounts import (
    AccountContracts,
    beacon_deposit_wallet_address,
    proxy_wallet_address,
    resolve_deposit_wallet_address,
    safe_wallet_address,
    uups_deposit_wallet_address,
)
from venue.accounts.derivation import (
    beacon_init_code_hash,
    deposit_wallet_args,
    uups_init_code_hash,
)

SDK_DERIVE = SDK_CONFIG + """
from polymarket._internal import wallet as w
d = config.wallet_derivation
result = [{
    "beacon": w.derive_beacon_deposit_wallet_address(owner, d),
    "uups": w.derive_uups_deposit_wallet_address(owner, d),
    "proxy": w.derive_proxy_wallet_address(owner, d),
    "safe": w.derive_safe_wallet_address(owner, d),
    "uups_hash": w._uups_deposit_init_code_hash(
        d.deposit_wallet_implementation, w._deposit_wallet_args(owner, d)).hex(),
    "beacon_hash": w._beacon_deposit_init_code_hash(
        d.deposit_wallet_beacon, w._deposit_wallet_args(owner, d)).hex(),
} for owner in payload["owners"]]
"""


def ours(owner: str, contracts: AccountContracts) -> dict[str, str]:
    args = deposit_wallet_args(owner, contracts.deposit_wallet_factory)
    return {
        "beacon": beacon_deposit_wallet_address(owner, contracts),
        "uups": uups_deposit_wallet_address(owner, contracts),
        "proxy": proxy_wallet_address(owner, contracts),
        "safe": safe_wallet_address(owner, contracts),
        "uups_hash": uups_init_code_hash(contracts.deposit_wallet_implementation, args).hex(),
        "beacon_hash": beacon_init_code_hash(contracts.deposit_wallet_beacon, args).hex(),
    }


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_wallet_address_and_init_code_hash_matches_the_sdk(table: str) -> None:
    contracts = TABLES[table]
    # Owners as given in any case: derivation does not depend on the checksum.
    owners = [*OWNERS, OWNERS[0].lower(), "0x" + OWNERS[1][2:].upper()]
    theirs = sdk_result(SDK_DERIVE, {"owners": owners, "contracts": contracts_json(contracts)})
    assert [ours(owner, contracts) for owner in owners] == theirs
    addresses = [row[k] for row in theirs[: len(OWNERS)] for k in ("beacon", "uups", "proxy",
                                                                      "safe")]
    assert len(set(addresses)) == len(addresses)  # no two derivations coincide


def test_a_known_polygon_vector() -> None:
    """A fixed vector, so a change in both the SDK and us together is still caught."""
    owner = "0x1111111111111111111111111111111111111111"
    assert beacon_deposit_wallet_address(owner) == "0x574548bC296A44a39a7828343FC262244f37a7e5"
    assert uups_deposit_wallet_address(owner) == "0xfAeA0f08159fcF2f573fE24E9E989B0d48f7651B"
    assert proxy_wallet_address(owner) == "0xf537a2b3159593a425e2fa8F5bA3bD3080D4a18a"
    assert safe_wallet_address(owner) == "0x6B503aD95D139BE2A07CD0E8888D71c6403D9C9C"


@pytest.mark.parametrize("has_beacon,uups_has_code,expected", [
    (False, False, "uups"), (False, True, "uups"), (True, True, "uups"), (True, False, "beacon"),
])
def test_resolution_follows_the_docs_rule(has_beacon: bool, uups_has_code: bool,
                                          expected: str) -> None:
    owner = OWNERS[2]
    want = {"uups": uups_deposit_wallet_address(owner),
            "beacon": beacon_deposit_wallet_address(owner)}[expected]
    assert resolve_deposit_wallet_address(owner, factory_has_beacon=has_beacon,
                                          uups_has_code=uups_has_code) == want


def test_bad_addresses_are_refused() -> None:
    with pytest.raises(ValueError, match="not a hex address"):
        beacon_deposit_wallet_address("0x1234")
    with pytest.raises(ValueError, match="not a hex address"):
        uups_deposit_wallet_address("0x" + "zz" * 20)
