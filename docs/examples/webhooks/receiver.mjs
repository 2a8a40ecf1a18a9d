// A webhook receiver that checks copytrade's signature, with Node's own crypto (no package).
// The npm package `standardwebhooks` does the same: new Webhook(secret).verify(body, headers).
// Run: WEBHOOK_SECRET=whsec_... node receiver.mjs   (listens on http://127.0.0.1:9000/hook)
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const key = Buffer.from(process.env.WEBHOOK_SECRET.replace(/^whsec_/, ""), "base64");

function verified(headers, body) {
  const id = headers["webhook-id"], timestamp = headers["webhook-timestamp"];
  if (!id || !timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  // During a secret rotation two signatures come, space-separated: either may match.
  return (headers["webhook-signature"] || "").split(" ").some((entry) => {
    const [version, signature] = entry.split(",");
    const given = Buffer.from(signature || "", "base64");
    return version === "v1" && given.length === expected.length
      && timingSafeEqual(given, expected);
  });
}

createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    if (!verified(request.headers, body)) {
      response.writeHead(400).end();
      return;
    }
    const event = JSON.parse(body);
    console.log(JSON.stringify({ type: event.type, id: request.headers["webhook-id"] }));
    response.writeHead(204).end();
  });
}).listen(Number(process.env.PORT || 9000), "127.0.0.1");
