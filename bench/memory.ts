/**
 * Where a server's memory goes after the load of `npm run bench:redis` (status for `--seconds`,
 * then bind-app and unbind-app of `--apps` distinct apps, `--connections` at once), `--runs` times
 * back to back on the same process: RSS, V8's heap (used, and its new and old spaces) and memory
 * outside it (`external`, `arrayBuffers`), right after each run and after a forced full GC (the
 * live heap). Not part of any test. Usage:
 *
 *   npx tsx bench/memory.ts [--server provider] [--registry off|memory|redis] [--connections 256]
 *                           [--runs 3] [--apps 2000] [--seconds 5] [-- <node flags>]
 *
 * `--server` is a file of bench/servers (provider, node-http, express-handwritten...); the
 * provider's registry is picked as bench/servers/provider.ts reads it, `redis` with
 * BENCH_REDIS_URL pointing at a redis-server of yours.
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { compiledEntry, compileServers } from "./build.js";
import { bindAppForm, CALLS, unbindAppForm } from "./calls.js";
import { load } from "./load.js";
import { runHarness } from "./process.js";
import type { ReadyMessage } from "./servers/listen.js";
import type { MemoryReport } from "./servers/memory-report.js";

const root = new URL("..", import.meta.url).pathname;

function line(label: string, report: MemoryReport): string {
  const { rss, heapTotal, heapUsed, external, arrayBuffers, spaces } = report;
  return `| ${label} | ${rss} | ${heapTotal} | ${heapUsed} | ${spaces.new ?? "-"} | ${spaces.old ?? "-"} | ${external} | ${arrayBuffers} |`;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      server: { type: "string", default: "provider" },
      registry: { type: "string", default: "memory" },
      connections: { type: "string", default: "256" },
      runs: { type: "string", default: "3" },
      apps: { type: "string", default: "2000" },
      seconds: { type: "string", default: "5" },
    },
  });
  compileServers();
  const child = fork(compiledEntry(join(root, "bench/servers", `${values.server}.ts`)), [], {
    execArgv: ["--expose-gc", "--import", compiledEntry(join(root, "bench/servers/memory-report.ts")), ...positionals],
    env: { ...process.env, NODE_ENV: "production", BENCH_PROVIDER_REGISTRY: values.registry },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const [{ port }] = (await once(child, "message")) as [ReadyMessage];
  const baseUrl = `http://127.0.0.1:${port}`;
  const measure = async (memory: "now" | "after-gc"): Promise<MemoryReport> => {
    child.send({ memory });
    for (;;) {
      const [message] = (await once(child, "message")) as [{ memoryReport?: MemoryReport }];
      if (message.memoryReport) return message.memoryReport;
    }
  };
  const connections = Number(values.connections);
  const apps = Number(values.apps);
  const lines = [
    `${values.server} (registry ${values.registry}), ${connections} connections, node flags: ${positionals.join(" ") || "none"}; MiB`,
    "",
    "| when | RSS | heap total | heap used | new space | old space | external | arrayBuffers |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    line("started", await measure("now")),
  ];
  for (let run = 1; run <= Number(values.runs); run++) {
    const phases = [
      await load(baseUrl, CALLS.status, { seconds: Number(values.seconds) }, connections),
      await load(baseUrl, CALLS["bind-app"], { requests: apps, body: (i) => bindAppForm(`memory-r${run}-${i}`) }, connections),
      await load(baseUrl, CALLS["unbind-app"], { requests: apps, body: (i) => unbindAppForm(`memory-r${run}-${i}`) }, connections),
    ];
    lines.push(line(`after run ${run}`, await measure("now")), line(`after run ${run}, full GC`, await measure("after-gc")));
    // A reference server answers only the calls it knows (node-http has no unbind-app): say so rather than fail.
    const failed = phases.map((phase) => phase.non2xx + phase.errors + phase.timeouts);
    process.stderr.write(`run ${run}: answers other than 2xx or errors, status / bind-app / unbind-app: ${failed.join(" / ")}\n`);
  }
  child.kill("SIGTERM");
  await once(child, "exit");
  console.log(["", ...lines, ""].join("\n"));
  return 0;
}

runHarness(main, "MEMORY BENCHMARK");
