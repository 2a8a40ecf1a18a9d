# Let the key KEY_ID move money without asking you first. Turning the guard off needs the
# step-up token; without it the answer is 403 scope_required and nothing changes.
curl -sS --fail-with-body -X PATCH "$COPYTRADE_URL/api/keys/$KEY_ID" \
  -H "Authorization: Bearer $SESSION" \
  -H "X-Step-Up-Token: $STEP_UP" \
  -H 'Content-Type: application/json' \
  -d '{"confirm_money_tools": false}'
