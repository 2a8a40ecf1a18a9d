# Revoke the config's link: whoever opens it gets 404 from now on. Prints 204.
curl -sS --fail-with-body -o /dev/null -w '%{http_code}\n' \
  -X DELETE "$COPYTRADE_URL/api/configs/$CONFIG_ID/share" \
  -H "Authorization: Bearer $COPYTRADE_KEY"
