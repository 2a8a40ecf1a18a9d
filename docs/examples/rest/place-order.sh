# Place the previewed order. The Idempotency-Key makes a retry safe: the same key answers
# the first result again instead of buying twice.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/markets/order" \
  -H "Authorization: Bearer $COPYTRADE_KEY" \
  -H "Idempotency-Key: $(python3 -c 'import uuid; print(uuid.uuid4())')" \
  -H 'Content-Type: application/json' \
  -d "{\"token_id\": \"$TOKEN_ID\", \"side\": \"buy\", \"size\": \"10\",
       \"order_type\": \"market\", \"preview_id\": \"$PREVIEW_ID\"}"
