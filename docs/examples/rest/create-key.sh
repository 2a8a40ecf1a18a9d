# Mint an API key with the session token. The answer's "secret" (svck_live_...) is shown
# this once: keep it as COPYTRADE_KEY.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/keys" \
  -H "Authorization: Bearer $SESSION" \
  -H 'Content-Type: application/json' \
  -d '{"name": "my script", "scopes": ["read:account", "read:markets", "read:positions",
       "read:trades", "trade:execute", "trade:cancel"]}'
