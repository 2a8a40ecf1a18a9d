"""Channel kinds are registered providers: the table drives every surface. A kind registered
by a test is a choice of the API's schemas (and only while registered), is added through the
REST API and the dashboard's form, is shown as its provider redacts it, and is sent to over
real HTTP when an event is emitted; the built-in kinds are exactly the table's everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest
from marshmallow import ValidationError

from models.notifications import NotificationChannel, NotificationDelivery
from models.user import User
from schemas.notifications import (
    CHANNEL_KINDS,
    ChannelCreateRequestSchema,
    ChannelSchema,
)
from services.notifications import deliveries, events, providers, transports
from services.notifications.outcome import Outcome
from services.notifications.providers import Added, Provider
from services.notifications.transports import Message
from tests.dashboard.test_login_binding import _post, _sign_in_with_code
from tests.notifications.fakes import Fake, running

SHOWN = "a loft (address withheld)"


class Pigeon(Provider):
    """A kind no module of the app knows: it posts ``{"coo": text}`` to the loft's URL."""

    kind = "pigeon"
    label = "Carrier pigeon"
    takes_url = True
    url_hint = "the loft's address"
    target = "the loft"

    def add(self, user: User, url: str | None, label: str) -> Added:
        """Store the loft's URL as it came (a test's loopback receiver)."""
        return Added(NotificationChannel.create(user=user, kind=self.kind, label=label,
                                                target=url or ""))

    def shown_target(self, channel: NotificationChannel, whole_url: str | None = None) -> str:
        """Never the loft's address."""
        return SHOWN

    def send(self, channel: NotificationChannel, message: Message) -> Outcome:
        """POST the text over the shared guarded transport."""
        body = json.dumps({"coo": message.text}).encode()
        return transports.post(channel.target, body, dict(transports.JSON_HEADERS))


@pytest.fixture
def pigeon() -> Iterator[Pigeon]:
    """The Pigeon kind, registered for the test only."""
    provider = providers.register(Pigeon())
    try:
        yield provider
    finally:
        providers.unregister(provider.kind)


def _accepts(kind: str) -> bool:
    try:
        ChannelCreateRequestSchema().load({"kind": kind})
    except ValidationError:
        return False
    return True


def test_the_built_in_kinds_are_the_tables_on_every_surface(client):
    kinds = [provider.kind for provider in providers.all_providers()]
    assert kinds == ["webhook", "email", "telegram", "discord", "slack"]
    assert list(CHANNEL_KINDS) == kinds
    spec = client.get("/openapi.json").get_json()["components"]["schemas"]
    for name in ("ChannelCreateRequest", "Channel"):
        assert spec[name]["properties"]["kind"]["enum"] == kinds
    assert all(_accepts(kind) for kind in kinds) and not _accepts("pigeon")
    with pytest.raises(ValueError, match="registered already"):
        providers.register(providers.get("email"))


def test_a_registered_kind_is_a_choice_is_added_shown_and_sent_through(
        tune, client, user, auth_headers, pigeon):
    assert "pigeon" in ChannelCreateRequestSchema().fields["kind"].validators[0].choices
    assert _accepts("pigeon")
    assert ChannelSchema().validate({"kind": "pigeon"}, partial=True) == {}
    with running(Fake()) as loft:
        added = client.post("/api/notifications/channels", headers=auth_headers,
                            json={"kind": "pigeon", "url": loft.url + "/loft", "label": "roof"})
        assert added.status_code == 201, added.get_data(as_text=True)
        assert added.get_json()["kind"] == "pigeon"
        assert added.get_json()["target"] == SHOWN
        [listed] = client.get("/api/notifications/channels", headers=auth_headers).get_json()
        assert (listed["kind"], listed["label"], listed["target"]) == ("pigeon", "roof", SHOWN)

        events.emit(user, "claim.completed", "claim.completed:pigeon", amount=Decimal("3.5"),
                    market="Will it rain?")
        [delivery] = NotificationDelivery.select()
        assert deliveries.deliver(delivery.id) == "sent"
        assert loft.bodies() == [{"coo": "3.50 pUSD claimed from “Will it rain?”."}]
    providers.unregister("pigeon")
    assert not _accepts("pigeon")
    refused = client.post("/api/notifications/channels", headers=auth_headers,
                          json={"kind": "pigeon", "url": "https://example.com/"})
    assert refused.status_code == 400 and refused.get_json()["code"] == "validation_failed"
    assert "kind" in refused.get_json()["fields"]


def test_the_dashboards_form_offers_a_registered_kind_and_adds_it(
        tune, client, user, inbox, pigeon):
    _sign_in_with_code(client, inbox, user.email)
    page = client.get("/dashboard/notifications/settings").get_data(as_text=True)
    assert '<option value="pigeon">Carrier pigeon</option>' in page
    assert "Carrier pigeon: the loft&#39;s address." in page
    with running(Fake()) as loft:
        card = _post(client, "/dashboard/notifications/channels",
                     {"kind": "pigeon", "url": loft.url + "/loft", "label": "roof"})
        assert card.status_code == 200, card.get_data(as_text=True)
        html = card.get_data(as_text=True)
        assert "Carrier pigeon channel added" in html and SHOWN in html
        assert loft.url not in html
    assert NotificationChannel.get(NotificationChannel.user == user).kind == "pigeon"
