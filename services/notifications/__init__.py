"""Notifications: events in, deliveries out. What happened to a user is recorded once (by the
emitter's event id), rendered from one template per event type, shown in the app, and
delivered to the channels the user chose (webhooks signed per Standard Webhooks, email,
Telegram, Discord, Slack: one provider module per kind, ``providers/``) as RQ jobs that are
recorded before sending, retried with backoff and folded into a digest when they come in a
burst. Emitters call ``events.emit``. It imports only the platform domain: every other
domain may emit.
"""
