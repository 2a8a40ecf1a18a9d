# Read a shared setup (SHARED_TOKEN: the end of a link someone sent you): the trader it
# copies and its rules, which POST /api/configs/preview takes as they are.
curl -sS --fail-with-body "$COPYTRADE_URL/api/shared-configs/$SHARED_TOKEN" \
  -H "Authorization: Bearer $COPYTRADE_KEY"
