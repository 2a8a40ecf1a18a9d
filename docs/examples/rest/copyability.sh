# Would copying TARGET have worked for you over the last 30 days, with these rules and at
# this deployment's detection delay? 202 while the report is built: follow "location".
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/traders/$TARGET/copyability" \
  -H "Authorization: Bearer $COPYTRADE_KEY" \
  -H 'Content-Type: application/json' \
  -d '{"window": "30d",
       "rules": {"size_multiplier": "0.5", "max_position_usdc": "100",
                 "price_deviation_bps": 1000, "min_target_trade_usdc": "5"}}'
