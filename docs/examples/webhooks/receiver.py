"""A webhook receiver that checks copytrade's signature (pip install standardwebhooks).

Run: WEBHOOK_SECRET=whsec_... python receiver.py   (listens on http://127.0.0.1:9000/hook)
"""

import json
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

webhook = Webhook(os.environ["WEBHOOK_SECRET"])


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            # Checks webhook-signature over webhook-id, webhook-timestamp (5 minutes) and body.
            event = webhook.verify(body, dict(self.headers))
        except WebhookVerificationError:
            self.send_response(400)
            self.end_headers()
            return
        print(json.dumps({"type": event["type"], "id": self.headers["webhook-id"]}), flush=True)
        self.send_response(204)
        self.end_headers()


HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "9000"))), Receiver).serve_forever()
