# Place the previewed 5 pUSD buy: the same amount (not the shares) and its preview_id.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/markets/order" \
  -H "Authorization: Bearer $COPYTRADE_KEY" \
  -H "Idempotency-Key: $(python3 -c 'import uuid; print(uuid.uuid4())')" \
  -H 'Content-Type: application/json' \
  -d "{\"token_id\": \"$TOKEN_ID\", \"side\": \"buy\", \"amount\": \"5\",
       \"order_type\": \"market\", \"preview_id\": \"$PREVIEW_ID\"}"
