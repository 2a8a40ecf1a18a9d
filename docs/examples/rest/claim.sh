# Claim every resolved position's winnings into your trading wallet (or only some, with
# {"token_ids": [...]}). A session token claims; so does a key with wallet:write (the key
# create-key.sh mints has none: 403 scope_required). Claiming twice claims once: what is
# being claimed is not offered again.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/positions/claim" \
  -H "Authorization: Bearer $SESSION" \
  -H 'Content-Type: application/json' \
  -d '{}'
