/**
 * Where a server's memory goes after the load of `npm run bench:redis` (status for `--seconds`,
 * then bind-app and unbind-app of `--apps` distinct apps, `--connections` at once), `--runs` times
 * back to back on the same process: RSS, V8's heap (used, and its new and old spaces) and memory
 * outside it (`external`, `arrayBuffers`), right after each run and after a forced full GC (the
 * live heap). Not part of any test. Usage:
 *
 *   npx tsx bench/memory.ts [--server provider-registry] [--connections 256] [--runs 3]
 *                           [--apps 2000] [--seconds 5] [-- <node flags>]
 *
 * `--server` is a server id of `npm run bench` (bench/servers/catalog.ts); a server with a
 * `RedisStore` gets a redis-server of its own, as there.
 */
import { once } from "node:events";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { compiledEntry, compileServers } from "./build.js";
import { bindAppForm, CALLS, unbindAppForm } from "./calls.js";
import { startServer } from "./child.js";
import { load } from "./load.js";
import { runHarness } from "./process.js";
import { startBenchRedis } from "./redis-server.js";
import { SERVERS } from "./servers/catalog.js";
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
      server: { type: "string", default: "provider-registry" },
      connections: { type: "string", default: "256" },
      runs: { type: "string", default: "3" },
      apps: { type: "string", default: "2000" },
      seconds: { type: "string", default: "5" },
    },
  });
  const spec = SERVERS.find((server) => server.id === values.server);
  if (!spec) throw new Error(`Unknown --server "${values.server}". Known: ${SERVERS.map((server) => server.id).join(", ")}.`);
  compileServers();
  const redis = spec.redis ? await startBenchRedis(spec.id) : undefined;
  try {
    const running = await startServer(spec, {
      nodeArgs: ["--expose-gc", "--import", compiledEntry(join(root, "bench/servers/memory-report.ts")), ...positionals],
      env: redis && { BENCH_REDIS_URL: redis.url },
      stdoutFile: "/dev/null",
    });
    const child = running.process;
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
      `${spec.id}, ${connections} connections, node flags: ${positionals.join(" ") || "none"}; MiB`,
      "",
      "| when | RSS | heap total | heap used | new space | old space | external | arrayBuffers |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
      line("started", await measure("now")),
    ];
    try {
      for (let run = 1; run <= Number(values.runs); run++) {
        const phases = [
          await load(running.baseUrl, CALLS.status, { seconds: Number(values.seconds) }, connections),
          await load(running.baseUrl, CALLS["bind-app"], { requests: apps, body: (i) => bindAppForm(`memory-r${run}-${i}`) }, connections),
          await load(running.baseUrl, CALLS["unbind-app"], { requests: apps, body: (i) => unbindAppForm(`memory-r${run}-${i}`) }, connections),
        ];
        lines.push(line(`after run ${run}`, await measure("now")), line(`after run ${run}, full GC`, await measure("after-gc")));
        // A reference server answers only the calls it knows (node-http has no unbind-app): say so rather than fail.
        const failed = phases.map((phase) => phase.non2xx + phase.errors + phase.timeouts);
        process.stderr.write(`run ${run}: answers other than 2xx or errors, status / bind-app / unbind-app: ${failed.join(" / ")}\n`);
      }
    } finally {
      await running.stop();
    }
    console.log(["", ...lines, ""].join("\n"));
  } finally {
    await redis?.stop();
  }
  return 0;
}

runHarness(main, "MEMORY BENCHMARK");
