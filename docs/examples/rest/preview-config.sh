# Preview copying a trader (TARGET: their wallet address) at half their size, on paper
# (no money moves). The answer shows the trader's recent trades and a "preview_id".
curl -sS --fail-with-body -X POST "$COPYTRADE_URL/api/configs/preview" \
  -H "Authorization: Bearer $COPYTRADE_KEY" \
  -H 'Content-Type: application/json' \
  -d "{\"target_address\": \"$TARGET\", \"size_multiplier\": \"0.5\",
       \"max_position_usdc\": \"100\", \"paper_trading\": true}"
