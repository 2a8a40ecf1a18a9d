"""The local faucet: `copytrade dev fund ADDRESS` mints dev money on the recorded chain."""

from __future__ import annotations

import os
from decimal import Decimal

from click.testing import CliRunner

from chain.keys import generate_keypair
from chain.tokens import native_balance, token_balance
from cli import main
from devstack import faucet


def test_dev_fund_mints_on_the_recorded_chain(chain, tmp_path, monkeypatch) -> None:
    path = faucet.save(tmp_path, chain.contracts)
    assert path.stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("COPYTRADE_INSTANCE", str(tmp_path))
    address = generate_keypair().address
    result = CliRunner().invoke(main, ["dev", "fund", address.lower(), "--pusd", "12.5",
                                       "--usdce", "0.000001", "--matic", "2"])
    assert result.exit_code == 0, result.output
    assert address in result.output
    # as money reads everywhere: the token's name, cents, a finer amount whole
    assert result.output.endswith(": 12.50 pUSD, 0.000001 USDC.e, 2.00 MATIC\n")
    w3 = chain.web3()
    assert token_balance(w3, chain.contracts.pusd, address) == Decimal("12.5")
    assert token_balance(w3, chain.contracts.usdce, address) == Decimal("0.000001")
    assert native_balance(w3, address) == Decimal(2)


def test_dev_fund_sends_no_matic_unless_asked(chain, tmp_path, monkeypatch) -> None:
    """The default account is a deposit wallet, which spends no MATIC (the relayer pays)."""
    faucet.save(tmp_path, chain.contracts)
    monkeypatch.setenv("COPYTRADE_INSTANCE", str(tmp_path))
    address = generate_keypair().address
    result = CliRunner().invoke(main, ["dev", "fund", address, "--pusd", "3"])
    assert result.exit_code == 0, result.output
    assert "MATIC" not in result.output and result.output.endswith(": 3.00 pUSD\n")
    w3 = chain.web3()
    assert token_balance(w3, chain.contracts.pusd, address) == Decimal(3)
    assert native_balance(w3, address) == 0


def test_dev_fund_without_a_local_chain_says_how(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COPYTRADE_INSTANCE", str(tmp_path))
    result = CliRunner().invoke(main, ["dev", "fund", "0x" + "ab" * 20])
    assert result.exit_code != 0 and "copytrade up" in result.output
    bad = CliRunner().invoke(main, ["dev", "fund", "nope"])
    assert bad.exit_code != 0 and "not an address" in bad.output


def test_local_stack_records_its_chain_for_the_faucet(tmp_path, monkeypatch) -> None:
    from devstack.stack import LocalStack
    from devstack.venue import SandboxServer

    # start_chain gives the chain's settings to its children, never to this process
    before = dict(os.environ)
    stack = LocalStack()
    sandbox = SandboxServer().start()
    stack.start_chain({"POLYGON_RPC_URL": None, "INSTANCE_PATH": str(tmp_path),
                       "VENUE": "sandbox", "SANDBOX_PORT": sandbox.port})
    try:
        # the sandbox's Data API indexes the chain the stack started
        assert sandbox.state.chain is not None
        assert sandbox.state.chain.rpc_url == stack.env["POLYGON_RPC_URL"]
        assert sandbox.state.chain.ctf == stack.env["CTF_ADDRESS"]
        recorded = faucet.load(tmp_path)
        assert recorded.rpc_url == stack.env["POLYGON_RPC_URL"]
        assert recorded.pusd == stack.env["PUSD_ADDRESS"]
        assert dict(os.environ) == before
        address = generate_keypair().address
        faucet.fund(recorded, address, pusd=Decimal(5), matic=Decimal(1))
        assert token_balance(recorded.web3(), recorded.pusd, address) == Decimal(5)
    finally:
        stack.stop()
        sandbox.stop()
