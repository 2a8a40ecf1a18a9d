# Ask for a confirmation code before a sensitive change (a step-up). It is emailed; on a
# laptop run with no mail server it is printed in the terminal running `make run` (or
# `copytrade up`).
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/auth/magic" \
  -H 'Content-Type: application/json' \
  -d "{\"email\": \"$EMAIL\", \"purpose\": \"step_up\"}"
