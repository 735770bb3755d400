/**
 * `npx tsx bench/costly-bodies.ts`: how long the provider takes to answer each of the costliest
 * 1 MiB bodies (test/http/costly-bodies.ts), one at a time, on loopback: the median of 5 calls,
 * upload included. The provider runs with its default limits, auth on, `registry: false`.
 */
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { createProvider } from "provider-kit";
import { COSTLY_BODIES } from "../packages/provider-kit/test/http/costly-bodies.js";
import { AUTH, GOOD_AUTH, fakeResource } from "../test/support/fake-provider.js";

const provider = createProvider(fakeResource().handlers, { auth: AUTH, registry: false, logger: pino({ level: "silent" }) });
const server = provider.listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
const { port } = server.address() as AddressInfo;

function post(body: string, type: string): Promise<{ status: number; ms: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method: "POST", path: "/resources", headers: { authorization: GOOD_AUTH, "content-type": type } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

console.log("| body | bytes | status | median ms |\n| --- | ---: | ---: | ---: |");
for (const { label, body, type } of COSTLY_BODIES) {
  const runs = [];
  // Each run uses a fresh instance name where the body creates one, so every run does the same work.
  for (let i = 0; i < 5; i++) runs.push(await post(body.replace(/"?name"?[=:]"?db\d/, (name) => `${name}r${i}`), type));
  const median = runs.map((run) => run.ms).sort((a, b) => a - b)[2]!;
  console.log(`| ${label} | ${Buffer.byteLength(body)} | ${runs[0]!.status} | ${median.toFixed(1)} |`);
}
server.closeAllConnections();
server.close();
await provider.close();
