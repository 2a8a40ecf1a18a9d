# Send a test event (type "notification.test") to the channel now, and see what it answered.
curl -sS --fail-with-body -X POST \
  "$COPYTRADE_URL/api/notifications/channels/$CHANNEL_ID/test" \
  -H "Authorization: Bearer $SESSION"
