"""The dashboard's claimable positions (Flask test client) are the maker's: a deposit
wallet's winnings on the dev chain are listed, though its owner EOA holds nothing, and
claiming them needs no POL."""

from __future__ import annotations

from decimal import Decimal

from services.wallets import claims, wallets
from tests.dashboard.test_login_binding import _sign_in_with_code
from tests.services.wallets.test_relayer_claims_chain import holding_winners


def test_the_claimable_list_reads_the_deposit_wallet_not_its_owner(accounts_venue, client,
                                                                  inbox, user) -> None:
    wallet, _maker, condition = holding_winners(accounts_venue, user, 6)
    assert claims.claimable_positions(wallet.address) == []  # the owner holds nothing

    [held] = claims.wallet_claimable(wallets.for_user(user))
    assert (held.condition_id, held.claimable_value) == (condition.condition_id, Decimal(6))
    _sign_in_with_code(client, inbox, user.email)
    page = client.get("/dashboard/wallet/claimable", headers={"HX-Request": "true"})
    html = page.get_data(as_text=True)
    assert page.status_code == 200, html
    assert str(condition.token_ids[0]) in html and f"Dev question {held.market_slug}" in html
    # what it pays reads as money, in the token's name (not its contract's address)
    assert 'data-label="Pays">6.00 pUSD<' in html and held.collateral not in html
    assert "MATIC" not in html and "POL" not in html.replace("POLICY", "")  # gasless
