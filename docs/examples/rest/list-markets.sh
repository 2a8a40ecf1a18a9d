# Find a market by words of its question (q). Each market lists its outcomes, each with
# its "token_id": an order names one of them as TOKEN_ID.
curl -sS --fail-with-body "$COPYTRADE_URL/api/markets?q=$QUERY&limit=3" \
  -H "Authorization: Bearer $COPYTRADE_KEY"
