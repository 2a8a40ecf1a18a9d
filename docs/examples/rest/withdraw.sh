# Withdraw 12.50 pUSD from your trading wallet to TO_ADDRESS: a session with a step-up
# token (request-step-up.sh, step-up.sh), or a key with wallet:write. Pick one
# WITHDRAWAL_KEY per withdrawal (python3 -c 'import uuid; print(uuid.uuid4())') and send the
# same one on a retry: it answers the first withdrawal again instead of sending twice.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/trading-wallet/withdraw" \
  -H "Authorization: Bearer $SESSION" \
  -H "X-Step-Up-Token: $STEP_UP" \
  -H "Idempotency-Key: $WITHDRAWAL_KEY" \
  -H 'Content-Type: application/json' \
  -d "{\"to_address\": \"$TO_ADDRESS\", \"amount\": \"12.50\", \"token\": \"usdc\"}"
