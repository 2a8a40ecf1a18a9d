# Start copying: the worker follows the trader from now on.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/configs/$CONFIG_ID/start" \
  -H "Authorization: Bearer $COPYTRADE_KEY"
