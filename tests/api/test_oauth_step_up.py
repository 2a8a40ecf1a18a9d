"""Issue 18, finding 11: allowing an app ``wallet:write`` at the OAuth consent page needs a
fresh emailed code, as minting such a key does (a stolen session cookie alone cannot hand
an app the power to withdraw)."""

from __future__ import annotations

from urllib.parse import urlencode

from models.oauth import Approval
from tests.api.oauth_flow import (
    authorize_params,
    csrf_from,
    exchange,
    pkce,
    redirect_params,
    register,
    sign_in,
)
from tests.api.test_sessions import confirmation_code

MONEY = ["read:account", "wallet:write"]


def test_allowing_wallet_write_asks_for_the_emailed_code(client, user, inbox):
    registration = register(client)
    sign_in(client, user)
    verifier, challenge = pkce()
    params = authorize_params(registration["client_id"], challenge, scope=" ".join(MONEY))
    url = "/oauth/authorize?" + urlencode(params)
    csrf = csrf_from(client.get(url).get_data(as_text=True))
    form = {"csrf_token": csrf, "decision": "approve", "approved_scope": MONEY}

    asked = client.post(url, data=form)
    assert asked.status_code == 403
    html = asked.get_data(as_text=True)
    assert "confirmation code" in html and 'name="step_up_code"' in html
    assert Approval.select().count() == 0
    wrong = client.post(url, data={**form, "step_up_code": "000000"
                                   if confirmation_code(inbox, user.email) != "000000"
                                   else "111111"})
    assert wrong.status_code == 401 and Approval.select().count() == 0

    allowed = client.post(url, data={**form,
                                     "step_up_code": confirmation_code(inbox, user.email)})
    back = redirect_params(allowed)
    tokens = exchange(client, registration["client_id"], back["code"], verifier).get_json()
    assert tokens["scope"] == "read:account wallet:write"


def test_apps_without_wallet_write_need_no_code(client, user, inbox):
    registration = register(client)
    sign_in(client, user)
    _verifier, challenge = pkce()
    params = authorize_params(registration["client_id"], challenge, scope="read:account")
    url = "/oauth/authorize?" + urlencode(params)
    csrf = csrf_from(client.get(url).get_data(as_text=True))
    allowed = client.post(url, data={"csrf_token": csrf, "decision": "approve",
                                     "approved_scope": ["read:account"]})
    assert redirect_params(allowed)["code"]
    assert inbox.messages == []
