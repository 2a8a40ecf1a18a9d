# Create the previewed config (stopped), then start copying with its "id".
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/configs" \
  -H "Authorization: Bearer $COPYTRADE_KEY" \
  -H 'Content-Type: application/json' \
  -d "{\"preview_id\": \"$CONFIG_PREVIEW_ID\"}"
