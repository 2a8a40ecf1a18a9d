"""The Keccak behind the EIP-712 digests: the fast private path and its public fallback agree."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from eth_utils import keccak

from tests.fresh_interpreter import run_python
from venue.signing import OrderKey, build_signed_market_order, build_signed_order
from venue.signing.eip712 import KECCAK_BACKEND, keccak256, public_keccak256

# Public Hardhat/Anvil account #0: a well-known test key, never funded on a real chain.
KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
DEPOSIT_WALLET = "0x43bc9b674bA052f815CbE2113cDe784cF9475B35"
TOKEN = "25968266233034896887180396827466900198780859103374793634057155743131125594489"


def signed_samples() -> list[list[str]]:
    """(order hash, signature, body) of limit and market orders of types 0 and 3."""
    key = OrderKey(KEY)
    orders = [
        build_signed_order(key, 137, TOKEN, "BUY", Decimal("0.5"), Decimal("10"), salt=7,
                           timestamp_ms=1784486089486),
        build_signed_order(key, 137, TOKEN, "SELL", Decimal("0.455"), Decimal("10.12"), "GTC",
                           Decimal("0.001"), True, 3, DEPOSIT_WALLET, salt=2**255 + 1,
                           timestamp_ms=1784486089486, metadata="0x" + "5a" * 32),
        build_signed_market_order(key, 137, TOKEN, "BUY", Decimal("7.77"), Decimal("0.53"),
                                  "FAK", signature_type=3, funder=DEPOSIT_WALLET, salt=9,
                                  timestamp_ms=1784486089486),
    ]
    return [[o.order_hash, o.signature, o.body("owner-key")] for o in orders]


def test_this_install_takes_the_fast_path() -> None:
    """The pinned pycryptodome has the binding the reused-state Keccak needs."""
    assert KECCAK_BACKEND == "pycryptodome-state"


def test_fast_and_public_keccak_agree_across_block_boundaries_and_buffers() -> None:
    data = bytes(range(256)) * 2
    for length in [*range(0, 140), *range(268, 276), 384, 512]:
        chunk = data[:length]
        assert keccak256(chunk) == public_keccak256(chunk) == keccak(chunk), length
        assert public_keccak256(bytearray(chunk)) == public_keccak256(memoryview(chunk))
        assert keccak256(memoryview(chunk)) == keccak(chunk)


@pytest.mark.parametrize("binding", ["missing", "changed"])
def test_without_the_private_binding_signing_falls_back_to_identical_bytes(binding: str) -> None:
    """With pycryptodome's private Keccak binding absent (or not what we expect), the module
    selects the public API and signs byte for byte the same orders."""
    script = (
        "import json, sys\n"
        "import Crypto.Hash.keccak as k, Crypto.Util._raw_api as raw\n"
        "import coincurve, eth_account, eth_hash.auto, py_clob_client_v2.signer\n"
        "if sys.argv[1] == 'missing':  # a pycryptodome without a name we import\n"
        "    del raw.SmartPointer\n"
        "else:  # a binding without keccak_reset (the public hash does not use it)\n"
        "    class Lacking:\n"
        "        def __init__(self, lib): self.lib = lib\n"
        "        def __getattr__(self, name):\n"
        "            if name == 'keccak_reset': raise AttributeError(name)\n"
        "            return getattr(self.lib, name)\n"
        "    k._raw_keccak_lib = Lacking(k._raw_keccak_lib)\n"
        "from venue.signing import eip712\n"
        "from tests.venue.signing.test_eip712 import signed_samples\n"
        "print(json.dumps([eip712.KECCAK_BACKEND, signed_samples()]))\n"
    )
    backend, samples = json.loads(run_python(script, binding))
    assert backend == "pycryptodome-public"
    assert samples == signed_samples()
