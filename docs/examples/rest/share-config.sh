# Share a config's rules (CONFIG_ID) by link. The answer's "url" opens them on the
# dashboard and its "token" reads them over the API; both are shown this once. Sharing
# again makes a new link and the old one stops working. "show_results": true would also
# show the config's PnL and how many of its copies filled.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/configs/$CONFIG_ID/share" \
  -H "Authorization: Bearer $COPYTRADE_KEY" \
  -H 'Content-Type: application/json' \
  -d '{"show_results": false}'
