"""Wallet classification from (signer, wallet): ours equals the SDK's try_classify_wallet_type."""

from __future__ import annotations

import pytest

from tests.sdk_env import SDK_CONFIG, sdk_result
from tests.venue.accounts.conftest import OWNERS, TABLES, contracts_json
from venue.accounts import (
    WalletType,
    beacon_deposit_wallet_address,
    classify_wallet,
    proxy_wallet_address,
    safe_wallet_address,
    uups_deposit_wallet_address,
)

SDK_CLASSIFY = SDK_CONFIG + """
from polymarket._internal.wallet import try_classify_wallet_type, signature_type_for
result = []
for signer, wallet in payload["pairs"]:
    kind = try_classify_wallet_type(signer=signer, wallet=wallet,
                                    config=config.wallet_derivation)
    result.append([kind, None if kind is None else signature_type_for(kind)])
"""


def pairs_for(table: str) -> list[tuple[str, str]]:
    contracts = TABLES[table]
    pairs = []
    for i, owner in enumerate(OWNERS[:4]):
        other = OWNERS[i + 1]
        pairs += [
            (owner, owner),
            (owner, owner.lower()),
            (owner.lower(), beacon_deposit_wallet_address(owner, contracts).lower()),
            (owner, uups_deposit_wallet_address(owner, contracts)),
            (owner, proxy_wallet_address(owner, contracts)),
            (owner, safe_wallet_address(owner, contracts)),
            # Another key's wallets: not this signer's (a session key, or a wrong key).
            (owner, other),
            (owner, beacon_deposit_wallet_address(other, contracts)),
            (owner, safe_wallet_address(other, contracts)),
        ]
    return pairs


@pytest.mark.parametrize("table", sorted(TABLES))
def test_classification_matches_the_sdk(table: str) -> None:
    pairs = pairs_for(table)
    theirs = sdk_result(SDK_CLASSIFY, {"pairs": pairs, "contracts": contracts_json(TABLES[table])})
    mine = []
    for signer, wallet in pairs:
        kind = classify_wallet(signer, wallet, TABLES[table])
        mine.append([None if kind is None else kind.value,
                     None if kind is None else kind.signature_type])
    assert mine == theirs
    assert {row[0] for row in mine} == {None, "EOA", "DEPOSIT_WALLET", "POLY_PROXY",
                                        "GNOSIS_SAFE"}


def test_wallets_of_one_table_are_foreign_to_another() -> None:
    owner = OWNERS[0]
    dev_wallet = beacon_deposit_wallet_address(owner, TABLES["dev"])
    assert classify_wallet(owner, dev_wallet, TABLES["dev"]) is WalletType.DEPOSIT_WALLET
    assert classify_wallet(owner, dev_wallet, TABLES["polygon"]) is None


@pytest.mark.parametrize("signer,wallet,field", [
    ("0x1234", OWNERS[0], "signer"),
    (OWNERS[0], "not an address", "wallet"),
    (OWNERS[0], OWNERS[1][:-1], "wallet"),
])
def test_a_malformed_address_names_its_field(signer: str, wallet: str, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field} is not a hex address"):
        classify_wallet(signer, wallet)
