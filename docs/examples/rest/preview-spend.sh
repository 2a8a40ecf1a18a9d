# Price a market buy that spends 5 pUSD, taker fee included, instead of naming shares.
# The answer's "estimated_shares" is what the 5 pUSD buys from the book now.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/markets/order/preview" \
  -H "Authorization: Bearer $COPYTRADE_KEY" \
  -H 'Content-Type: application/json' \
  -d "{\"token_id\": \"$TOKEN_ID\", \"side\": \"buy\", \"amount\": \"5\",
       \"order_type\": \"market\"}"
