# Follow the claim CLAIM_ID (an "id" from the answer's "claims") until its "status" is
# "confirmed"; the pUSD is then in your trading wallet.
curl -sS --fail-with-body "$COPYTRADE_URL/api/positions/claims/$CLAIM_ID" \
  -H "Authorization: Bearer $SESSION"
