# Ask for a sign-in code. It is emailed; on a laptop run with no mail server (no SMTP_URL)
# it is printed in the terminal running `make run` (or `copytrade up`), on a line with
# "sign-in code".
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/auth/magic" \
  -H 'Content-Type: application/json' \
  -d "{\"email\": \"$EMAIL\"}"
