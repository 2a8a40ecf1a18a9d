"""The dev chain's deposit wallets, checked against the official SDK (ACCOUNTS.md 2, 7.1).

The factory deploys each owner's wallet at the address `polymarket-client` derives; batches
are signed here with eth_account's typed-data signing, independently of the contract; order
signatures come from the SDK itself and are verified on chain through ERC-1271.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from eth_abi import encode
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils import keccak
from web3.exceptions import ContractLogicError

from devstack.chain.devchain import _artifacts
from devstack.chain.transact import send_and_wait
from tests.sdk_env import run_sdk
from venue.signing import ORDER_TYPE_STRING

MAX_UINT256 = 2**256 - 1
ERC1271_MAGIC = bytes.fromhex("1626ba7e")
ERC1271_FAIL = bytes.fromhex("ffffffff")
SESSION_MAGIC = bytes.fromhex("6492" * 16)
ZERO = "0x" + "00" * 20
DAY = 86_400

EIP712_DOMAIN = [
    {"name": "name", "type": "string"},
    {"name": "version", "type": "string"},
    {"name": "chainId", "type": "uint256"},
    {"name": "verifyingContract", "type": "address"},
]
# the V2 Order's fields, read from its canonical type string ("Order(uint256 salt,...)")
ORDER_FIELDS = [
    {"name": name, "type": kind}
    for kind, name in (field.split() for field in ORDER_TYPE_STRING[len("Order("):-1].split(","))
]

SDK_DERIVE = """
import json, sys
from polymarket._internal.environment import WalletDerivationConfig
from polymarket._internal.wallet import classify_account, derive_beacon_deposit_wallet_address
p = json.load(sys.stdin)
zero = "0x" + "00" * 20
config = WalletDerivationConfig(
    proxy_factory=zero, proxy_implementation=zero, safe_factory=zero,
    safe_init_code_hash="0x" + "00" * 32, deposit_wallet_factory=p["factory"],
    deposit_wallet_implementation=p["implementation"], deposit_wallet_beacon=p["beacon"])
kind = classify_account(signer=p["owner"], wallet=p["wallet"], config=config)
print(json.dumps({"address": derive_beacon_deposit_wallet_address(p["owner"], config),
                  "signer_type": kind.signer_type, "wallet_type": kind.wallet_type}))
"""

# as the SDK's secure client signs a type-3 order (_sign_order in clients/async_secure.py)
SDK_SIGN_ORDER = """
import json, sys
from eth_account import Account
from polymarket._internal.actions.orders.typed_data import (
    build_order_signature, build_order_typed_data)
from polymarket._internal.actions.orders.types import UnsignedOrder
from polymarket._internal.wallet import wrap_deposit_wallet_signature
p = json.load(sys.stdin)
signer = Account.from_key(p["key"])
unsigned = UnsignedOrder(**p["order"])
raw = signer.sign_typed_data(full_message=build_order_typed_data(unsigned)).signature.hex()
signature = build_order_signature(unsigned, raw if raw.startswith("0x") else "0x" + raw)
print(json.dumps(wrap_deposit_wallet_signature(
    signer=signer.address, signer_type=p["signer_type"], signature=signature)))
"""

SDK_SIGN_BATCH = """
import json, sys
from eth_account import Account
from polymarket._internal.actions.relayer.calls import TransactionCall
from polymarket._internal.actions.relayer.signing.deposit_wallet import sign_deposit_wallet_batch
p = json.load(sys.stdin)
calls = [TransactionCall(to=c["target"], data=c["data"], value=c["value"]) for c in p["calls"]]
print(json.dumps(sign_deposit_wallet_batch(
    Account.from_key(p["key"]), wallet=p["wallet"], calls=calls, nonce=str(p["nonce"]),
    deadline=str(p["deadline"]), chain_id=p["chain_id"])))
"""


# ---- helpers -------------------------------------------------------------------------------


def _contract(chain: Any, name: str, address: str) -> Any:
    return chain.web3().eth.contract(address=address, abi=_artifacts()[name].abi)


def _new_key() -> Any:
    return Account.create()


def _now(chain: Any) -> int:
    return int(chain.web3().eth.get_block("latest")["timestamp"])


def _digest(typed: dict[str, Any]) -> bytes:
    signable = encode_typed_data(full_message=typed)
    return keccak(b"\x19" + signable.version + signable.header + signable.body)


def _batch_typed(chain: Any, wallet: str, nonce: int, deadline: int,
                 calls: list[tuple[str, int, bytes]]) -> dict[str, Any]:
    return {
        "types": {
            "EIP712Domain": EIP712_DOMAIN,
            "Batch": [
                {"name": "wallet", "type": "address"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
                {"name": "calls", "type": "Call[]"},
            ],
            "Call": [
                {"name": "target", "type": "address"},
                {"name": "value", "type": "uint256"},
                {"name": "data", "type": "bytes"},
            ],
        },
        "primaryType": "Batch",
        "domain": {"name": "DepositWallet", "version": "1", "chainId": chain.chain_id,
                   "verifyingContract": wallet},
        "message": {"wallet": wallet, "nonce": nonce, "deadline": deadline,
                    "calls": [{"target": t, "value": v, "data": d} for t, v, d in calls]},
    }


def _sign(key: Any, typed: dict[str, Any]) -> bytes:
    return bytes(Account.sign_typed_data(key.key, full_message=typed).signature)


def _envelope(session_signer: str, signature: bytes) -> bytes:
    """ACCOUNTS.md 2.5 item 5: abi.encode(bytes32(signer), bytes32(0), sig) || magic."""
    signer_id = bytes.fromhex(session_signer[2:]).rjust(32, b"\x00")
    return encode(["bytes32", "bytes32", "bytes"], [signer_id, b"\x00" * 32, signature]) + (
        SESSION_MAGIC
    )


class Wallet:
    """A deployed deposit wallet, its owner key, and a funded relayer that submits batches."""

    def __init__(self, chain: Any) -> None:
        self.chain = chain
        self.owner = _new_key()
        self.address = chain.contracts.deploy_deposit_wallet(self.owner.address)
        self.contract = _contract(chain, "DepositWallet", self.address)
        self.relayer = chain.new_wallet()

    def batch(self, calls: list[tuple[str, int, bytes]], *, nonce: int | None = None,
              deadline: int | None = None) -> tuple[dict[str, Any], tuple[Any, ...]]:
        """The typed data of a batch and its ABI tuple (current nonce, 10 minutes by default)."""
        nonce = self.nonce() if nonce is None else nonce
        deadline = _now(self.chain) + 600 if deadline is None else deadline
        typed = _batch_typed(self.chain, self.address, nonce, deadline, calls)
        return typed, (self.address, nonce, deadline, calls)

    def nonce(self) -> int:
        """The wallet's batch nonce."""
        return int(self.contract.functions.nonce().call())

    def check(self, batch: tuple[Any, ...], signature: bytes) -> None:
        """Dry-run execute (raises the revert reason)."""
        self.contract.functions.execute(batch, signature).call({"from": self.relayer.address})

    def execute(self, batch: tuple[Any, ...], signature: bytes) -> None:
        """Submit execute from the relayer and require success."""
        data = self.contract.encode_abi("execute", args=[batch, signature])
        send_and_wait(self.chain.web3(), "0x" + self.relayer.private_key.hex(),
                      {"to": self.address, "data": data})

    def run(self, calls: list[tuple[str, int, bytes]]) -> None:
        """Execute calls in one owner-signed batch."""
        typed, batch = self.batch(calls)
        self.execute(batch, _sign(self.owner, typed))

    def call_data(
        self, name: str, address: str, function: str, *args: Any
    ) -> tuple[str, int, bytes]:
        """One Call of a batch."""
        data = _contract(self.chain, name, address).encode_abi(function, args=list(args))
        return (address, 0, bytes.fromhex(data[2:]))


@pytest.fixture
def wallet(chain) -> Wallet:
    return Wallet(chain)


def _balance(chain: Any, token: str, holder: str) -> int:
    return int(_contract(chain, "DevToken", token).functions.balanceOf(holder).call())


def _sdk_derivation(chain: Any, owner: str, wallet: str) -> dict[str, str]:
    c = chain.contracts
    return run_sdk(SDK_DERIVE, {
        "factory": c.deposit_wallet_factory, "beacon": c.deposit_wallet_beacon,
        "implementation": c.deposit_wallet_implementation, "owner": owner, "wallet": wallet,
    })


# ---- the factory ---------------------------------------------------------------------------


def test_factory_answers_the_sdks_beacon_probe(chain) -> None:
    c = chain.contracts
    raw = chain.web3().eth.call({"to": c.deposit_wallet_factory, "data": "0x49493a4d"})
    assert bytes(raw)[-20:] == bytes.fromhex(c.deposit_wallet_beacon[2:])
    beacon = _contract(chain, "DepositWalletBeacon", c.deposit_wallet_beacon)
    assert beacon.functions.implementation().call() == c.deposit_wallet_implementation


def test_factory_deploys_the_wallet_at_the_sdk_derived_address(chain) -> None:
    owner = _new_key()
    predicted = chain.contracts.deposit_wallet_address(owner.address)
    sdk = _sdk_derivation(chain, owner.address, predicted)
    assert sdk == {"address": predicted, "signer_type": "OWNER", "wallet_type": "DEPOSIT_WALLET"}
    assert not chain.web3().eth.get_code(predicted)

    assert chain.contracts.deploy_deposit_wallet(owner.address) == predicted
    assert chain.web3().eth.get_code(predicted)
    deployed = _contract(chain, "DepositWallet", predicted)
    assert deployed.functions.owner().call() == owner.address
    assert deployed.functions.factory().call() == chain.contracts.deposit_wallet_factory
    assert deployed.functions.nonce().call() == 0


def test_only_the_operator_deploys_and_only_once(chain) -> None:
    owner = _new_key()
    factory = _contract(chain, "DepositWalletFactory", chain.contracts.deposit_wallet_factory)
    stranger = chain.new_wallet()
    with pytest.raises(ContractLogicError, match="not the operator"):
        factory.functions.deploy(owner.address).call({"from": stranger.address})
    chain.contracts.deploy_deposit_wallet(owner.address)
    with pytest.raises(ContractLogicError, match="already deployed"):
        factory.functions.deploy(owner.address).call({"from": chain.contracts.deployer})


# ---- batches -------------------------------------------------------------------------------


def test_the_implementation_alone_has_no_owner(chain) -> None:
    address = chain.contracts.deposit_wallet_implementation
    implementation = _contract(chain, "DepositWallet", address)
    with pytest.raises(ContractLogicError, match="not a clone"):
        implementation.functions.owner().call()



def test_an_owner_signed_batch_runs_its_calls(chain, wallet) -> None:
    c = chain.contracts
    c.mint(c.pusd, wallet.address, 5_000_000)
    payee = _new_key().address
    calls = [
        wallet.call_data("DevToken", c.pusd, "transfer", payee, 2_000_000),
        wallet.call_data("DevToken", c.pusd, "approve", c.ctf_exchange, MAX_UINT256),
        wallet.call_data("ConditionalTokens", c.ctf, "setApprovalForAll", c.ctf_exchange, True),
    ]
    typed, batch = wallet.batch(calls)
    assert wallet.contract.functions.hashBatch(batch).call() == _digest(typed)
    signature = _sign(wallet.owner, typed)
    # byte for byte what the official SDK signs for this batch
    sdk_signature = run_sdk(SDK_SIGN_BATCH, {
        "key": "0x" + bytes(wallet.owner.key).hex(), "wallet": wallet.address,
        "nonce": batch[1], "deadline": batch[2], "chain_id": chain.chain_id,
        "calls": [{"target": t, "value": v, "data": "0x" + d.hex()} for t, v, d in calls],
    })
    assert sdk_signature == "0x" + signature.hex()

    wallet.execute(batch, signature)

    assert _balance(chain, c.pusd, payee) == 2_000_000
    assert _balance(chain, c.pusd, wallet.address) == 3_000_000
    pusd = _contract(chain, "DevToken", c.pusd)
    assert pusd.functions.allowance(wallet.address, c.ctf_exchange).call() == MAX_UINT256
    ctf = _contract(chain, "ConditionalTokens", c.ctf)
    assert ctf.functions.isApprovedForAll(wallet.address, c.ctf_exchange).call() is True
    assert wallet.nonce() == 1


def test_the_factory_relays_a_batch_to_its_own_wallets_only(chain, wallet) -> None:
    c = chain.contracts
    factory = _contract(chain, "DepositWalletFactory", c.deposit_wallet_factory)
    typed, batch = wallet.batch(
        [wallet.call_data("DevToken", c.pusd, "approve", c.neg_risk_exchange, 9)])
    signature = _sign(wallet.owner, typed)
    with pytest.raises(ContractLogicError, match="wallet not deployed"):
        factory.functions.execute(_new_key().address, batch, signature).call()
    with pytest.raises(ContractLogicError, match="not a clone"):  # a contract, not our wallet
        factory.functions.execute(c.deposit_wallet_implementation, batch, signature).call()
    data = factory.encode_abi("execute", args=[wallet.address, batch, signature])
    send_and_wait(chain.web3(), "0x" + wallet.relayer.private_key.hex(),
                  {"to": c.deposit_wallet_factory, "data": data})
    pusd = _contract(chain, "DevToken", c.pusd)
    assert pusd.functions.allowance(wallet.address, c.neg_risk_exchange).call() == 9
    assert wallet.nonce() == 1


def test_a_batch_is_refused_for_a_wrong_signer_a_reused_nonce_or_a_past_deadline(
    chain, wallet
) -> None:
    c = chain.contracts
    calls = [wallet.call_data("DevToken", c.pusd, "approve", c.ctf_exchange, 1)]

    typed, batch = wallet.batch(calls)
    with pytest.raises(ContractLogicError, match="invalid signature"):
        wallet.check(batch, _sign(_new_key(), typed))
    # a signature for another wallet's batch does not carry over
    other = _batch_typed(chain, _new_key().address, batch[1], batch[2], calls)
    with pytest.raises(ContractLogicError, match="invalid signature"):
        wallet.check(batch, _sign(wallet.owner, other))

    wallet.execute(batch, _sign(wallet.owner, typed))
    with pytest.raises(ContractLogicError, match="invalid nonce"):
        wallet.check(batch, _sign(wallet.owner, typed))
    typed, batch = wallet.batch(calls, nonce=5)
    with pytest.raises(ContractLogicError, match="invalid nonce"):
        wallet.check(batch, _sign(wallet.owner, typed))

    typed, batch = wallet.batch(calls, deadline=_now(chain) - 1)
    with pytest.raises(ContractLogicError, match="expired deadline"):
        wallet.check(batch, _sign(wallet.owner, typed))
    assert wallet.nonce() == 1


def test_a_session_signer_signs_batches_until_revoked(chain, wallet) -> None:
    c = chain.contracts
    session = _new_key()
    approve = [wallet.call_data("DevToken", c.pusd, "approve", c.ctf_exchange, 7)]

    typed, batch = wallet.batch(approve)
    with pytest.raises(ContractLogicError, match="invalid signature"):
        wallet.check(batch, _envelope(session.address, _sign(session, typed)))

    valid_until = _now(chain) + 180 * DAY
    wallet.run([wallet.call_data("DepositWallet", wallet.address, "authorizeSessionSigner",
                                 session.address, valid_until)])
    assert wallet.contract.functions.sessionSignerValidUntil(session.address).call() == valid_until

    typed, batch = wallet.batch(approve)
    with pytest.raises(ContractLogicError, match="invalid signature"):
        wallet.check(batch, _sign(session, typed))  # a session key's signature needs its envelope
    wallet.execute(batch, _envelope(session.address, _sign(session, typed)))
    pusd = _contract(chain, "DevToken", c.pusd)
    assert pusd.functions.allowance(wallet.address, c.ctf_exchange).call() == 7

    # the session key may not manage keys, even its own
    revoke = [wallet.call_data("DepositWallet", wallet.address, "revokeSessionSigner",
                               session.address)]
    typed, batch = wallet.batch(revoke)
    with pytest.raises(ContractLogicError, match="owner only"):
        wallet.check(batch, _envelope(session.address, _sign(session, typed)))

    wallet.run(revoke)
    typed, batch = wallet.batch(approve)
    with pytest.raises(ContractLogicError, match="invalid signature"):
        wallet.check(batch, _envelope(session.address, _sign(session, typed)))


# ---- ERC-1271 order signatures ---------------------------------------------------------------


def _order(chain: Any, wallet: str) -> dict[str, Any]:
    return {
        "chain_id": chain.chain_id, "exchange_address": chain.contracts.ctf_exchange,
        "salt": int.from_bytes(os.urandom(6), "big"), "maker": wallet, "signer": wallet,
        "token_id": str(int.from_bytes(os.urandom(32), "big")), "maker_amount": 5_000_000,
        "taker_amount": 10_000_000, "side": "BUY", "signature_type": 3,
        "timestamp": 1_790_000_000_000, "expiration": 0, "order_type": "FAK",
        "metadata": "0x" + "00" * 32, "builder": "0x" + "00" * 32,
    }  # fmt: skip


def _order_digest(chain: Any, order: dict[str, Any]) -> bytes:
    """What the exchange asks the maker to validate: the plain V2 Order digest."""
    return _digest({
        "types": {"EIP712Domain": EIP712_DOMAIN, "Order": ORDER_FIELDS},
        "primaryType": "Order",
        "domain": {"name": "Polymarket CTF Exchange", "version": "2", "chainId": chain.chain_id,
                   "verifyingContract": order["exchange_address"]},
        "message": {
            "salt": order["salt"], "maker": order["maker"], "signer": order["signer"],
            "tokenId": int(order["token_id"]), "makerAmount": order["maker_amount"],
            "takerAmount": order["taker_amount"], "side": 0, "signatureType": 3,
            "timestamp": order["timestamp"], "metadata": bytes(32), "builder": bytes(32),
        },
    })  # fmt: skip


def _sdk_order_signature(key: Any, order: dict[str, Any], signer_type: str) -> bytes:
    signature = run_sdk(SDK_SIGN_ORDER, {"key": "0x" + bytes(key.key).hex(), "order": order,
                                         "signer_type": signer_type})
    return bytes.fromhex(signature[2:])


def _is_valid(wallet: Wallet, digest: bytes, signature: bytes) -> bytes:
    return bytes(wallet.contract.functions.isValidSignature(digest, signature).call())


def _tamper(signature: bytes, index: int) -> bytes:
    return signature[:index] + bytes([signature[index] ^ 1]) + signature[index + 1:]


def test_is_valid_signature_accepts_the_sdks_erc7739_order_signature(chain, wallet) -> None:
    order = _order(chain, wallet.address)
    digest = _order_digest(chain, order)
    signature = _sdk_order_signature(wallet.owner, order, "OWNER")
    assert len(signature) > 65
    assert _is_valid(wallet, digest, signature) == ERC1271_MAGIC

    assert _is_valid(wallet, digest, _tamper(signature, 10)) == ERC1271_FAIL  # inner signature
    assert _is_valid(wallet, digest, _tamper(signature, 70)) == ERC1271_FAIL  # app domain
    other = _order_digest(chain, {**order, "maker_amount": order["maker_amount"] + 1})
    assert _is_valid(wallet, other, signature) == ERC1271_FAIL
    assert _is_valid(wallet, digest, signature[:65]) == ERC1271_FAIL  # plain EIP-712 is not enough
    stranger = _sdk_order_signature(_new_key(), order, "OWNER")
    assert _is_valid(wallet, digest, stranger) == ERC1271_FAIL


def test_is_valid_signature_accepts_an_active_session_signers_order(chain, wallet) -> None:
    session = _new_key()
    order = _order(chain, wallet.address)
    digest = _order_digest(chain, order)
    signature = _sdk_order_signature(session, order, "SESSION_KEY")
    assert signature.endswith(SESSION_MAGIC)
    assert _is_valid(wallet, digest, signature) == ERC1271_FAIL  # not authorized yet

    authorize = wallet.call_data("DepositWallet", wallet.address, "authorizeSessionSigner",
                                 session.address, _now(chain) + 180 * DAY)
    wallet.run([authorize])
    assert _is_valid(wallet, digest, signature) == ERC1271_MAGIC
    assert _is_valid(wallet, digest, _tamper(signature, 200)) == ERC1271_FAIL

    wallet.run([wallet.call_data("DepositWallet", wallet.address, "revokeSessionSigner",
                                 session.address)])
    assert _is_valid(wallet, digest, signature) == ERC1271_FAIL


# ---- collateral ----------------------------------------------------------------------------


def test_the_ramps_wrap_usdce_in_the_wallet_into_pusd_and_back(chain, wallet) -> None:
    c = chain.contracts
    c.mint(c.usdce, wallet.address, 4_000_000)
    vault_before = _balance(chain, c.usdce, c.collateral_offramp)
    wallet.run([
        wallet.call_data("DevToken", c.usdce, "approve", c.collateral_onramp, 3_000_000),
        wallet.call_data("CollateralOnramp", c.collateral_onramp, "wrap",
                         c.usdce, wallet.address, 3_000_000),
    ])  # fmt: skip
    assert _balance(chain, c.usdce, wallet.address) == 1_000_000
    assert _balance(chain, c.pusd, wallet.address) == 3_000_000
    assert _balance(chain, c.usdce, c.collateral_offramp) == vault_before + 3_000_000

    payee = _new_key().address
    wallet.run([
        wallet.call_data("DevToken", c.pusd, "approve", c.collateral_offramp, 1_000_000),
        wallet.call_data("CollateralOfframp", c.collateral_offramp, "unwrap",
                         c.usdce, payee, 1_000_000),
    ])  # fmt: skip
    assert _balance(chain, c.pusd, wallet.address) == 2_000_000
    assert _balance(chain, c.usdce, payee) == 1_000_000
    assert _balance(chain, c.usdce, c.collateral_offramp) == vault_before + 2_000_000

    onramp = _contract(chain, "CollateralOnramp", c.collateral_onramp)
    with pytest.raises(ContractLogicError, match="unsupported asset"):
        onramp.functions.wrap(c.pusd, wallet.address, 1).call({"from": wallet.address})
    offramp = _contract(chain, "CollateralOfframp", c.collateral_offramp)
    with pytest.raises(ContractLogicError, match="unsupported asset"):
        offramp.functions.unwrap(c.pusd, wallet.address, 1).call({"from": wallet.address})


@pytest.mark.parametrize("neg_risk", [False, True], ids=["binary", "neg-risk"])
def test_a_collateral_adapter_redeems_winning_positions_for_pusd(chain, wallet, neg_risk) -> None:
    c = chain.contracts
    if neg_risk:
        condition = c.prepare_neg_risk_question()
        adapter = c.neg_risk_collateral_adapter
    else:
        condition = c.prepare_condition()
        adapter = c.ctf_collateral_adapter
    c.split_position(wallet.address, condition, 2_500_000)
    if neg_risk:
        c.resolve_neg_risk_question(condition.question_id, True)
    else:
        c.resolve_condition(condition.question_id, [1, 0])
    pusd_before = _balance(chain, c.pusd, wallet.address)
    usdce_before = _balance(chain, c.usdce, wallet.address)

    wallet.run([
        wallet.call_data("ConditionalTokens", c.ctf, "setApprovalForAll", adapter, True),
        wallet.call_data("CtfCollateralAdapter", adapter, "redeemPositions",
                         c.pusd, b"\x00" * 32, bytes.fromhex(condition.condition_id[2:]), [1, 2]),
    ])  # fmt: skip

    assert _balance(chain, c.pusd, wallet.address) == pusd_before + 2_500_000
    assert _balance(chain, c.usdce, wallet.address) == usdce_before
    ctf = _contract(chain, "ConditionalTokens", c.ctf)
    for token_id in condition.token_ids:
        assert ctf.functions.balanceOf(wallet.address, token_id).call() == 0


def test_a_collateral_adapter_pays_only_pusd(chain) -> None:
    c = chain.contracts
    adapter = _contract(chain, "CtfCollateralAdapter", c.ctf_collateral_adapter)
    with pytest.raises(ContractLogicError, match="collateral must be pUSD"):
        adapter.functions.redeemPositions(c.usdce, b"\x00" * 32, b"\x01" * 32, [1, 2]).call()
