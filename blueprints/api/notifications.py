"""Notifications: the centre (list, mark read), channels (add, list, remove, test, rotate, log)
and preferences. Reads: a session JWT or `read:account`; marking read: `trade:execute`;
adding and changing channels and preferences: a session JWT."""

from __future__ import annotations

from uuid import UUID

from flask.views import MethodView

from blueprints import access
from blueprints.api.base import Blueprint
from blueprints.api.pagination import PAGINATION_HEADERS, paged
from blueprints.idempotency import idempotency_exempt, idempotent
from schemas import request_examples
from schemas.common import PageArgsSchema
from schemas.notifications import (
    ChannelCreateRequestSchema,
    ChannelCreateResponseSchema,
    ChannelSchema,
    DeliverySchema,
    MarkReadRequestSchema,
    MarkReadResultSchema,
    NotificationsArgsSchema,
    NotificationSchema,
    PreferenceSchema,
    PreferencesRequestSchema,
    RotatedSecretSchema,
)
from services.notifications import channels, inbox, preferences

blp = Blueprint("notifications", __name__, url_prefix="/api/notifications",
                description="Notifications")


def _user():
    return access.current_principal().user


@blp.route("")
class Notifications(MethodView):
    @access.requires("read:account")
    @blp.arguments(NotificationsArgsSchema, location="query")
    @blp.response(200, NotificationSchema(many=True), headers=PAGINATION_HEADERS)
    @blp.errors(400, 401, 403, 429)
    def get(self, args):
        """The caller's notifications, newest first (bare array, X-Pagination-* headers).

        Types: copy.filled, copy.skipped, copy.unconfirmed, config.stopped,
        config.breaker_opened, config.buys_paused, config.out_of_funds, order.filled, order.failed,
        claim.available, claim.completed, withdrawal.completed, withdrawal.ambiguous,
        deposit.received, account.ready, feed.degraded, venue.throttled, agent.confirmation,
        channel.disabled.
        `unread=true` keeps the unread ones.
        """
        return paged(inbox.list_notifications(_user(), **args))


@blp.route("/read")
class MarkRead(MethodView):
    # A write: marking read hides a withdrawal or stop notice, so a read-only key may not.
    @access.requires("trade:execute")
    @idempotent
    @blp.arguments(MarkReadRequestSchema, example=request_examples.MARK_READ)
    @blp.response(200, MarkReadResultSchema)
    @blp.errors(400, 401, 403, 429)
    def post(self, body):
        """Mark notifications read (`ids`), or all of them without `ids`. Needs
        `trade:execute` (a `read:account` key cannot hide a notice from its owner)."""
        return inbox.mark_read(_user(), body.get("ids"))


@blp.route("/channels")
class Channels(MethodView):
    @access.requires("read:account")
    @blp.response(200, ChannelSchema(many=True))
    @blp.errors(401, 403, 429)
    def get(self):
        """The caller's channels, oldest first; never a secret."""
        return [channels.as_dict(c) for c in channels.list_channels(_user())]

    @access.jwt_only
    @idempotency_exempt("the response holds the webhook's one-time secret or Telegram link "
                        "code, which is never stored, so it cannot be replayed. Retrying "
                        "adds a second channel; remove the spare one.")
    @blp.arguments(ChannelCreateRequestSchema, example=request_examples.CHANNEL)
    @blp.response(201, ChannelCreateResponseSchema)
    @blp.errors(400, 401, 403, 429, 501)
    def post(self, body):
        """Add a channel. 400 `validation_failed` naming `url` when a webhook, Discord or
        Slack URL is not https (outside loopback, when allowed) or resolves to a private
        address. Webhooks are signed per Standard Webhooks (`webhook-id`,
        `webhook-timestamp`, `webhook-signature`: `v1,` + base64 HMAC-SHA256 with the secret
        shown here once). 501 `feature_not_enabled` for telegram without a bot configured.
        """
        added = channels.add(_user(), body["kind"], url=body.get("url"), label=body["label"])
        return {**channels.as_dict(added.channel, added.url), "secret": added.secret,
                "link_code": added.link_code, "link_url": added.link_url}


@blp.route("/channels/<uuid:channel_id>")
class Channel(MethodView):
    @access.jwt_only
    @idempotent
    @blp.response(204)
    @blp.errors(401, 403, 404, 429)
    def delete(self, channel_id: UUID):
        """Remove a channel (its preferences and delivery log go with it)."""
        channels.remove(_user(), channel_id)


@blp.route("/channels/<uuid:channel_id>/test")
class ChannelTest(MethodView):
    @access.jwt_only
    @idempotent
    @blp.response(200, DeliverySchema)
    @blp.errors(400, 401, 403, 404, 429)
    def post(self, channel_id: UUID):
        """Send a test event now; answers its delivery (status, status code, latency)."""
        return channels.send_test(_user(), channel_id)


@blp.route("/channels/<uuid:channel_id>/rotate-secret")
class ChannelRotate(MethodView):
    @access.jwt_only
    @idempotency_exempt("the response holds the new one-time secret, which is never stored.")
    @blp.response(200, RotatedSecretSchema)
    @blp.errors(400, 401, 403, 404, 429)
    def post(self, channel_id: UUID):
        """A new webhook secret, shown once; the old one keeps signing beside it (a second
        `v1,` signature) until `previous_valid_until`."""
        return channels.rotate_secret(_user(), channel_id)


@blp.route("/channels/<uuid:channel_id>/deliveries")
class ChannelDeliveries(MethodView):
    @access.requires("read:account")
    @blp.arguments(PageArgsSchema, location="query")
    @blp.response(200, DeliverySchema(many=True), headers=PAGINATION_HEADERS)
    @blp.errors(400, 401, 403, 404, 429)
    def get(self, args, channel_id: UUID):
        """The channel's delivery log, newest first: status, attempts, answer and latency.
        Retries wait 30 s, 2 min, 10 min and 1 h; then the delivery is `failed`."""
        return paged(channels.delivery_log(_user(), channel_id, **args))


@blp.route("/preferences")
class Preferences(MethodView):
    @access.requires("read:account")
    @blp.response(200, PreferenceSchema(many=True))
    @blp.errors(401, 403, 429)
    def get(self):
        """Every (event type, channel) rule in force; `channel_id` null is the app."""
        return preferences.list_preferences(_user())

    @access.jwt_only
    @idempotent
    @blp.arguments(PreferencesRequestSchema, example=request_examples.PREFERENCES)
    @blp.response(200, PreferenceSchema(many=True))
    @blp.errors(400, 401, 403, 429)
    def put(self, body):
        """Store rules (on/off, `min_amount`, `reasons`); answers every rule in force."""
        return preferences.set_preferences(_user(), body["preferences"])
