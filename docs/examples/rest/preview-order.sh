# Price a market buy of 10 shares of one outcome (TOKEN_ID: a market's "token_ids" entry,
# from GET /api/markets). Nothing is sent: the answer's "preview_id" places it.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/markets/order/preview" \
  -H "Authorization: Bearer $COPYTRADE_KEY" \
  -H 'Content-Type: application/json' \
  -d "{\"token_id\": \"$TOKEN_ID\", \"side\": \"buy\", \"size\": \"10\",
       \"order_type\": \"market\"}"
