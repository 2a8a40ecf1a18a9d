# Follow the withdrawal WITHDRAWAL_ID (the answer's "withdrawal_id") until its "status" is
# "confirmed" (or "failed", with its "error"); "tx_hash" is the Polygon transaction.
curl -sS --fail-with-body "$COPYTRADE_URL/api/trading-wallet/withdrawals/$WITHDRAWAL_ID" \
  -H "Authorization: Bearer $SESSION"
