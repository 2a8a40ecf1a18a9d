"""Settings: environment names, embedded defaults, generated secrets."""

from __future__ import annotations

import stat

import config


def test_secrets_generated_once_with_private_mode(tmp_path):
    first = config.load(env={}, instance=tmp_path)
    second = config.load(env={}, instance=tmp_path)
    assert first["SECRET_KEY"] == second["SECRET_KEY"]
    assert first["WALLET_ENCRYPTION_KEY"] == second["WALLET_ENCRYPTION_KEY"]
    assert first["SECRET_KEY"] != first["WALLET_ENCRYPTION_KEY"]
    for name in ("secret_key", "wallet_encryption_key"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def test_embedded_defaults(tmp_path):
    settings = config.load(env={}, instance=tmp_path)
    assert settings["DATABASE_URL"] == f"sqlite:///{tmp_path / 'copytrade.db'}"
    assert settings["REDIS_URL"] is None
    assert settings["VENUE"] == "sandbox"
    assert settings["POLYMARKET_CLOB_URL"] == "http://127.0.0.1:8010/clob"
    assert settings["POLYMARKET_RTDS_URL"] == "ws://127.0.0.1:8010/rtds"


def test_polymarket_venue_and_overrides(tmp_path):
    env = {"VENUE": "polymarket", "SECRET_KEY": "s", "POLYMARKET_RTDS_URL": "",
           "CHAIN_ID": "80002", "BASE_URL": "https://ct.example/"}
    settings = config.load(env=env, instance=tmp_path)
    assert settings["POLYMARKET_GAMMA_URL"] == "https://gamma-api.polymarket.com"
    assert settings["POLYMARKET_RTDS_URL"] == ""  # empty: poll only
    assert settings["SECRET_KEY"] == "s"
    assert settings["CHAIN_ID"] == 80002
    assert settings["BASE_URL"] == "https://ct.example"
