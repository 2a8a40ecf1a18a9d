"""The local chain's faucet: fund any address with dev pUSD, USDC.e and MATIC.

``copytrade up`` deploys the dev contracts on anvil and records them in
``instance/devchain.json``; ``copytrade dev fund ADDRESS`` reads that file and mints.
Only for the local chain: the file exists only where ``copytrade up`` started anvil.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

from devstack.chain.devchain import DevContracts
from devstack.files import write_atomically

NATIVE_DECIMALS = 18
DEV_CHAIN_FILE = "devchain.json"


def save(instance: str | os.PathLike[str], contracts: DevContracts) -> Path:
    """Record the running dev chain's contracts (mode 0600: it holds anvil's dev key)."""
    return write_atomically(Path(instance) / DEV_CHAIN_FILE,
                            json.dumps(contracts.to_dict(), indent=2).encode())


def load(instance: str | os.PathLike[str]) -> DevContracts:
    """The dev chain recorded by ``copytrade up``; FileNotFoundError when none runs here."""
    path = Path(instance) / DEV_CHAIN_FILE
    return DevContracts.from_dict(json.loads(path.read_text()))


def fund(contracts: DevContracts, address: str, *, pusd: Decimal = Decimal(0),
         usdce: Decimal = Decimal(0), matic: Decimal | None = None) -> dict[str, Decimal]:
    """Mint pUSD/USDC.e to ``address`` and top its MATIC up to ``matic``; return what was given."""
    given: dict[str, Decimal] = {}
    for name, token, amount in (("pusd", contracts.pusd, pusd),
                                ("usdc_e", contracts.usdce, usdce)):
        if amount > 0:
            contracts.mint(token, address, to_base_units(amount, contracts.token_decimals(token)))
            given[name] = amount
    if matic is not None and matic > 0:
        target = to_base_units(matic, NATIVE_DECIMALS)
        # anvil sets balances; never lower one that is already higher
        contracts.fund_native(address, max(target, contracts.native_balance_wei(address)))
        given["matic"] = matic
    return given


def to_base_units(amount: Decimal, decimals: int) -> int:
    """Convert a Decimal token amount to base units; ValueError if it has finer precision."""
    if not isinstance(amount, Decimal):
        raise TypeError("amount must be a Decimal")
    if not amount.is_finite():
        raise ValueError(f"amount is not finite: {amount}")
    scaled = amount.scaleb(decimals)
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{amount} has more than {decimals} decimal places")
    return int(scaled)
