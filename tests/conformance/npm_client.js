// Runs the published npm client @normalizex/honeypot-is (package.json pins it), unchanged:
// only its two public base-URL properties are pointed at a local tokenrisk.
//
// stdin:  {"baseUrl": "http://127.0.0.1:PORT", "concurrency": 4,
//          "calls": [{"method": "honeypotScan" | "getPairs" | "getContractVerification",
//                     "args": [...]}, ...]}
// stdout: one JSON array, one entry per call in order:
//         {"ok": true, "data": <what the client returned>}
//      or {"ok": false, "status": <HTTP status or null>, "data": <error body>, "error": "..."}
"use strict";

const fs = require("fs");
const { HoneypotIsV1 } = require("@normalizex/honeypot-is");

async function run(client, call) {
  try {
    const data = await client[call.method](...call.args);
    return { ok: true, data };
  } catch (err) {
    const response = err.response || {};
    return {
      ok: false,
      status: response.status === undefined ? null : response.status,
      data: response.data === undefined ? null : response.data,
      error: String(err.message),
    };
  }
}

async function main() {
  const job = JSON.parse(fs.readFileSync(0, "utf8"));
  const client = new HoneypotIsV1();
  client.endpoint = `${job.baseUrl}/v1`;
  client.sub_endpoint = `${job.baseUrl}/v1`;
  const results = [];
  const step = Math.max(1, job.concurrency || 1);
  for (let i = 0; i < job.calls.length; i += step) {
    const batch = job.calls.slice(i, i + step).map((call) => run(client, call));
    results.push(...(await Promise.all(batch)));
  }
  process.stdout.write(JSON.stringify(results));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
