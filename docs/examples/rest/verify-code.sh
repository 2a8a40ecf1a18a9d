# Trade the 6-digit code for a session token (24 hours): the "token" of the answer.
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/auth/verify-code" \
  -H 'Content-Type: application/json' \
  -d "{\"email\": \"$EMAIL\", \"code\": \"$CODE\"}"
