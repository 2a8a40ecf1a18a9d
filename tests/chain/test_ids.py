"""Condition, collection and position ids: off-chain, on our CTF, and as Polymarket has them."""

from __future__ import annotations

import os

import pytest

from chain import ids
from config import POLYGON_CONTRACTS
from devstack.chain.compile import compile_contracts

# Real markets from the venue samples (Gamma `conditionId` and `clobTokenIds`, see
# /work/shared/venue-samples/README.md): gamma-market-by-slug.json, gamma-public-search.json
# (ordinary markets, USDC.e-backed) and gamma-markets.json, gamma-events.json (neg-risk).
REAL_MARKETS = [
    (
        "0xa467b14d51f01b957109d9cbb1d6c124fab2a089d52ed8f471d23c2812e743b7",
        False,
        "32338220190071351435772801779725302244575775216413325951443816017994629993401",
        "25659310674993675562345759665114759892400026242514633218387667107987341231962",
    ),
    (
        "0x647fe16b6b42c32554fe6c4a4e9f06c22547acd5a109cbe0de6c9bae43ec09a8",
        False,
        "82555365063909823996695225073951686953962263586871703887873293639797300021122",
        "114864044085275704824767724161446505770691378478296635109394628126577576954599",
    ),
    (
        "0x80c7ab790a5ab37e11c79a5a658d729ac29e6e17aa2d3fc859e4a78c0d896369",
        True,
        "23305969272951306317157739183583008201155714184462027894470739210983097393455",
        "104425493878736059469967522531475345635535129482242136756374819053652959839920",
    ),
    (
        "0xc8f1cf5d4f26e0fd9c8fe89f2a7b3263b902cf14fde7bfccef525753bb492e47",
        True,
        "60590045489347122735554346200880179420435533609307820342798544098823516727807",
        "76005700027045000587004110133818166617024719626220722682005164003117993034812",
    ),
]


@pytest.mark.parametrize(("condition_id", "neg_risk", "yes", "no"), REAL_MARKETS)
def test_token_ids_match_polymarket(condition_id: str, neg_risk: bool, yes: str, no: str) -> None:
    collateral = POLYGON_CONTRACTS[
        "NEG_RISK_WRAPPED_COLLATERAL_ADDRESS" if neg_risk else "USDCE_ADDRESS"]
    assert ids.outcome_position_ids(collateral, condition_id) == [int(yes), int(no)]


def test_contract_ids_equal_offchain_ids(chain) -> None:
    ctf = chain.web3().eth.contract(
        address=chain.contracts.ctf, abi=compile_contracts()["ConditionalTokens"].abi
    )
    oracle, question = chain.accounts[3].address, os.urandom(32)
    cid = ids.condition_id(oracle, question, 3)
    assert "0x" + ctf.functions.getConditionId(oracle, question, 3).call().hex() == cid

    parent = ids.ZERO_COLLECTION
    for index_set in (1, 2, 4, 5, 6):
        on_chain = ctf.functions.getCollectionId(parent, bytes.fromhex(cid[2:]), index_set).call()
        assert "0x" + on_chain.hex() == ids.collection_id(parent, cid, index_set)

    # nested collections exercise the alt_bn128 point addition (ecAdd precompile)
    other = ids.condition_id(oracle, os.urandom(32), 2)
    parent_hex = ids.collection_id(ids.ZERO_COLLECTION, other, 1)
    nested = ctf.functions.getCollectionId(
        bytes.fromhex(parent_hex[2:]), bytes.fromhex(cid[2:]), 2
    ).call()
    assert "0x" + nested.hex() == ids.collection_id(parent_hex, cid, 2)
    # ...and, as in the real framework, the order of conditions does not matter
    assert ids.collection_id(ids.collection_id(ids.ZERO_COLLECTION, cid, 2), other, 1) == (
        ids.collection_id(parent_hex, cid, 2)
    )

    collection = ids.collection_id(parent, cid, 1)
    assert ctf.functions.getPositionId(
        chain.contracts.usdce, bytes.fromhex(collection[2:])
    ).call() == ids.position_id(chain.contracts.usdce, collection)
