# Send your notifications to a webhook. With the sandbox venue (the dev stack) a receiver
# on your own machine (http://127.0.0.1:...) is accepted; against Polymarket the URL must be
# https on a public host. Channels are changed with a session token (not an API key). The
# answer's "secret" (whsec_...) is shown this once.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/notifications/channels" \
  -H "Authorization: Bearer $SESSION" \
  -H 'Content-Type: application/json' \
  -d "{\"kind\": \"webhook\", \"url\": \"$WEBHOOK_URL\", \"label\": \"my receiver\"}"
