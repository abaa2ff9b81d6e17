// Runs GoPlus's published Node SDK @goplus/sdk-node (package.json pins it), unchanged
// except for its host: the generated ApiClient hard-codes GoPlus's base URL in its
// constructor, so its `basePath` is redirected to a local tokenrisk (a prototype accessor
// that the constructor's assignment goes through). Nothing else is touched.
//
// stdin:  {"baseUrl": "http://127.0.0.1:PORT", "chainId": "31337", "calls": [["0x..."], ...]}
// stdout: one JSON array, one entry per call: {"ok": true, "data": <what tokenSecurity
//         resolved>} or {"ok": false, "status": <HTTP status or null>, "error": "..."}
"use strict";

const fs = require("fs");
const path = require("path");
const sdk = require("@goplus/sdk-node");

function pointAt(baseUrl) {
  const dist = path.dirname(require.resolve("@goplus/sdk-node"));
  const { ApiClient } = require(path.join(dist, "gen", "ApiClient.js"));
  Object.defineProperty(ApiClient.prototype, "basePath", {
    configurable: true,
    get() {
      return baseUrl;
    },
    set(_ignored) {},
  });
}

async function main() {
  const job = JSON.parse(fs.readFileSync(0, "utf8"));
  pointAt(job.baseUrl);
  const results = [];
  for (const addresses of job.calls) {
    try {
      const data = await sdk.GoPlus.tokenSecurity(job.chainId, addresses, 300);
      results.push({ ok: true, data });
    } catch (err) {
      const status = err && err.status !== undefined ? err.status : null;
      results.push({ ok: false, status, error: String(err && err.message) });
    }
  }
  process.stdout.write(JSON.stringify(results));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
