# Have the key KEY_ID ask you again before it moves money (no step-up needed to turn a
# guard on).
curl -sS --fail-with-body -X PATCH "$COPYTRADE_URL/api/keys/$KEY_ID" \
  -H "Authorization: Bearer $SESSION" \
  -H 'Content-Type: application/json' \
  -d '{"confirm_money_tools": true}'
