"""Token-id derivation and the venue's auth primitives, checked against real vectors."""

from __future__ import annotations

import httpx
from eth_account import Account

from devstack.ctf import binary_token_ids, condition_id, position_id
from devstack.venue import auth
from venue.signing.auth import l1_headers

ANVIL_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
ANVIL_ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
USDC_E = "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174"


def test_position_ids_match_a_live_polymarket_market():
    # gamma-market-by-slug.json (Xi Jinping, non-neg-risk, created with USDC.e collateral)
    condition = "0xa467b14d51f01b957109d9cbb1d6c124fab2a089d52ed8f471d23c2812e743b7"
    assert binary_token_ids(USDC_E, condition) == (
        "32338220190071351435772801779725302244575775216413325951443816017994629993401",
        "25659310674993675562345759665114759892400026242514633218387667107987341231962",
    )
    assert position_id(USDC_E, condition, 1) != position_id(ANVIL_ADDRESS, condition, 1)


def test_condition_id_is_keccak_of_oracle_question_and_slots():
    question = "0x" + "11" * 32
    first = condition_id(ANVIL_ADDRESS, question, 2)
    assert first.startswith("0x") and len(first) == 66
    assert condition_id(ANVIL_ADDRESS, question, 3) != first


def test_sandbox_token_ids_derive_from_the_configured_collateral(sandbox_venue):
    state = sandbox_venue.state
    market = next(iter(state.catalog.markets.values()))
    assert market.token_ids == binary_token_ids(state.config.collateral, market.condition_id)
    assert market.condition_id == condition_id(state.config.oracle, market.question_id, 2)


def test_clob_auth_signature_vectors_verify():
    # samples README, "Auth headers": py-clob-client-v2 and polyoxide vectors
    vectors = [
        (80002, "10000000", "23",
         "0xf62319a987514da40e57e2f4d7529f7bac38f0355bd88bb5adbb3768d80de6c"
         "1682518e0af677d5260366425f4361e7b70c25ae232aff0ab2331e2b164a1aedc1b"),
        (137, "1700000000", "42",
         "0x8e61f918d542a48ff9433fb6cc4c172a2763ad53dda8afa07f77321e2e0a1e"
         "3055f29fac1408e0020dca977190fd4f01b1c73b5e2078be29c88a32887945fe2a1b"),
    ]
    for chain_id, timestamp, nonce, signature in vectors:
        assert auth.verify_l1(chain_id, ANVIL_ADDRESS, signature, timestamp, nonce)
        assert not auth.verify_l1(chain_id, ANVIL_ADDRESS, signature, timestamp, "1")


def test_hmac_vector_from_the_client_tests():
    signature = auth.hmac_signature(
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "1000000", "test-sign", "/orders",
        '{"hash": "0x123"}',
    )
    assert signature == "ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc="


def test_l1_endpoints_refuse_a_wrong_signature(sandbox_venue):
    other = Account.create()
    headers = {
        "POLY_ADDRESS": ANVIL_ADDRESS,
        "POLY_SIGNATURE": "0x" + "00" * 65,
        "POLY_TIMESTAMP": "1700000000",
        "POLY_NONCE": "0",
    }
    response = httpx.post(f"{sandbox_venue.clob_url}/auth/api-key", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"error": "Invalid L1 Request headers"}
    headers["POLY_ADDRESS"] = other.address
    response = httpx.get(f"{sandbox_venue.clob_url}/auth/derive-api-key", headers=headers)
    assert response.status_code == 401


def test_create_and_derive_give_the_same_creds_for_the_same_nonce(sandbox_venue):
    from py_clob_client_v2.client import ClobClient

    client = ClobClient(sandbox_venue.clob_url, chain_id=137, key=ANVIL_KEY)
    created = client.create_api_key()
    derived = client.derive_api_key()
    assert created == derived
    assert len(created.api_passphrase) == 64
    assert len(created.api_secret) == 44
    other_nonce = client.create_api_key(nonce=5)
    assert other_nonce.api_key != created.api_key


def test_creating_existing_creds_is_refused_and_the_sdks_derive_them(sandbox_venue):
    from py_clob_client_v2.client import ClobClient

    client = ClobClient(sandbox_venue.clob_url, chain_id=137, key=ANVIL_KEY)
    created = client.create_api_key()
    again = httpx.post(f"{sandbox_venue.clob_url}/auth/api-key",
                       headers=l1_headers(ANVIL_KEY, 137))
    assert (again.status_code, again.json()) == (400, {"error": "Could not create api key"})
    assert client.create_or_derive_api_key() == created  # the SDK's fallback


def test_l2_endpoints_refuse_a_bad_hmac(sandbox_venue, make_trader):
    trader = make_trader()
    creds = trader.client.creds
    headers = {
        "POLY_ADDRESS": trader.address,
        "POLY_SIGNATURE": auth.hmac_signature(creds.api_secret, "1", "GET", "/data/orders", ""),
        "POLY_TIMESTAMP": "1",
        "POLY_API_KEY": creds.api_key,
        "POLY_PASSPHRASE": creds.api_passphrase,
    }
    ok = httpx.get(f"{sandbox_venue.clob_url}/data/orders", headers=headers)
    assert ok.status_code == 200
    bad = dict(headers, POLY_TIMESTAMP="2")
    response = httpx.get(f"{sandbox_venue.clob_url}/data/orders", headers=bad)
    assert response.status_code == 401
    assert response.json() == {"error": "Unauthorized/Invalid api key"}
    wrong_passphrase = dict(headers, POLY_PASSPHRASE="0" * 64)
    assert httpx.get(
        f"{sandbox_venue.clob_url}/data/orders", headers=wrong_passphrase
    ).status_code == 401
