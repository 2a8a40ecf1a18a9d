# Exchange the code for a step-up token, bound to your session for 5 minutes: keep the
# answer's "step_up_token" as STEP_UP.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/auth/step-up" \
  -H "Authorization: Bearer $SESSION" \
  -H 'Content-Type: application/json' \
  -d "{\"code\": \"$CODE\"}"
