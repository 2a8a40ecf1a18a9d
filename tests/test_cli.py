"""The copytrade command: migrate and serve run as real processes; wallets reseal in-process."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time

import httpx
from click.testing import CliRunner

import config
from cli import main
from devstack.chain.devchain import die_with_parent
from models.notifications import NotificationChannel
from models.wallet import TradingWallet
from services.notifications import channels
from services.notifications import secrets as channel_secrets
from services.platform import chain_access, runtime, wiring
from services.wallets import wallets
from tests.conftest import DEADLINE, app_settings, free_port


def _env(tmp_path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(COPYTRADE_INSTANCE=str(tmp_path / "instance"), **extra)
    return env


def test_migrate_then_serve(tmp_path, redis_url):
    env = _env(tmp_path, REDIS_URL=redis_url)
    done = subprocess.run([sys.executable, "-m", "cli", "migrate"], env=env,
                          capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    assert "m0001_users" in done.stdout
    again = subprocess.run([sys.executable, "-m", "cli", "migrate"], env=env,
                           capture_output=True, text=True, timeout=DEADLINE)
    assert "applied 0 migrations" in again.stdout

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port),
                               "--workers", "1"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
    try:
        deadline = time.monotonic() + DEADLINE  # a starved machine took over 30 s
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stdout.read().decode(errors="replace")
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        assert response.status_code == 200
        stats = httpx.get(f"http://127.0.0.1:{port}/api/stats/platform", timeout=DEADLINE)
        assert stats.json()["total_users"] == 0
    finally:
        server.terminate()
        server.wait(timeout=DEADLINE)


def test_serve_refuses_unmigrated_database(tmp_path, redis_url):
    env = _env(tmp_path, REDIS_URL=redis_url)
    done = subprocess.run(
        [sys.executable, "-c", "import wsgi"], env=env, capture_output=True, text=True,
        timeout=DEADLINE)  # beside other runs, importing the app took 78 s
    assert done.returncode != 0
    assert "copytrade migrate" in done.stderr


def test_wallets_reseal_command(app, bound_db, user, tmp_path, monkeypatch, redis_url) -> None:
    # rotation: the new key is current, the old one retired; reseal moves every secret over
    saved = runtime.runtime()  # the command builds its own runtime: restored afterwards
    # The test Redis: without REDIS_URL the command's runtime started an embedded server in
    # this worker, which outlived the run (one orphaned redis-server per `make test`).
    monkeypatch.setenv("REDIS_URL", redis_url)

    wallet = wallets.get_or_create(user)
    old_key = app_settings(app).wallet_encryption_key
    key = wallets.signer(wallet)
    monkeypatch.setenv("COPYTRADE_INSTANCE", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", app_settings(app).database_url)
    monkeypatch.setenv("WALLET_ENCRYPTION_KEY", secrets.token_hex(32))
    failed = CliRunner().invoke(main, ["wallets", "reseal"])
    assert failed.exit_code != 0 and "WALLET_ENCRYPTION_KEY_PREVIOUS" in failed.output
    monkeypatch.setenv("WALLET_ENCRYPTION_KEY_PREVIOUS", old_key)
    result = CliRunner().invoke(main, ["wallets", "reseal"])
    assert result.exit_code == 0 and "re-sealed 1" in result.output, result.output
    resealed = TradingWallet.get_by_id(wallet.id)
    assert resealed.key_id == chain_access.current().sealing.current_id != wallet.key_id
    assert wallets.signer(resealed) == key
    runtime.install(saved)


def test_wallets_reseal_reseals_webhook_secrets_and_urls_after_a_key_rotation(
        app, bound_db, user, tmp_path, monkeypatch, redis_url) -> None:
    # The documented rotation (new key current, old one in WALLET_ENCRYPTION_KEY_PREVIOUS,
    # reseal, then the previous key dropped) must leave every channel able to sign and send.
    saved = runtime.runtime()
    monkeypatch.setenv("REDIS_URL", redis_url)
    added = NotificationChannel.create(user=user, kind="webhook")
    channel_secrets.seal_url(added, "https://hooks.example/in/tok-1")
    NotificationChannel.update(secret_sealed=channel_secrets.seal(added.id, "whsec_bmV3")).where(
        NotificationChannel.id == added.id).execute()
    channels.rotate_secret(user, added.id)  # a previous secret, still signing
    before = channel_secrets.signing_secrets(NotificationChannel.get_by_id(added.id))
    assert len(before) == 2
    old_key = app_settings(app).wallet_encryption_key
    monkeypatch.setenv("COPYTRADE_INSTANCE", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", app_settings(app).database_url)
    monkeypatch.setenv("WALLET_ENCRYPTION_KEY", secrets.token_hex(32))
    monkeypatch.setenv("WALLET_ENCRYPTION_KEY_PREVIOUS", old_key)
    try:
        result = CliRunner().invoke(main, ["wallets", "reseal"])
        assert result.exit_code == 0, result.output
        assert "and 1 notification channel" in result.output
        # The retired key dropped: only the new one is left, and everything opens under it.
        monkeypatch.delenv("WALLET_ENCRYPTION_KEY_PREVIOUS")
        runtime.install(wiring.build_runtime(config.load()))
        channel = NotificationChannel.get_by_id(added.id)
        assert channel_secrets.signing_secrets(channel) == before
        assert channel_secrets.url_of(channel) == "https://hooks.example/in/tok-1"
    finally:
        runtime.install(saved)


def test_migrate_seals_the_channel_urls_stored_plain(
        app, bound_db, user, tmp_path, monkeypatch, redis_url) -> None:
    # A row as releases before m0110 stored it: the whole URL, token and all, in ``target``.
    saved = runtime.runtime()
    monkeypatch.setenv("REDIS_URL", redis_url)
    url = "https://discord.com/api/webhooks/1/tok-plain"
    old = NotificationChannel.create(user=user, kind="discord", target=url)
    email = channels.add(user, "email").channel
    monkeypatch.setenv("COPYTRADE_INSTANCE", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", app_settings(app).database_url)
    monkeypatch.setenv("WALLET_ENCRYPTION_KEY", app_settings(app).wallet_encryption_key)
    try:
        result = CliRunner().invoke(main, ["migrate"])
        assert result.exit_code == 0, result.output
        assert "sealed 1 notification channel URL(s)" in result.output
        moved = NotificationChannel.get_by_id(old.id)
        assert moved.target == "https://discord.com/…" and "tok-plain" not in moved.url_sealed
        assert channel_secrets.url_of(moved) == url
        assert NotificationChannel.get_by_id(email.id).target == user.email  # not a URL
        again = CliRunner().invoke(main, ["migrate"])
        assert again.exit_code == 0 and "sealed" not in again.output
    finally:
        runtime.install(saved)


def test_building_a_runtime_leaves_web3_and_the_signing_stack_unimported():
    """Every process builds a Runtime, operator commands included (`copytrade status`, `jobs
    retry`): web3 and the venue's signing stack, a second of imports, come on first use."""
    from tests.fresh_interpreter import run_python

    loaded = run_python(
        "import sys, config\n"
        "from services.platform import jobs, operations, runtime, wiring\n"
        "built = wiring.build_runtime(config.load(env={}, overrides={"
        "'REDIS_URL': 'redis://127.0.0.1:6379/0'}))\n"
        "runtime.install(built)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'web3', 'eth_account', 'py_clob_client_v2', 'py_ecc'}))\n")
    assert loaded.strip() == "[]"
