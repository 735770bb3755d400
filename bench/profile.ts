/**
 * `npx tsx bench/profile.ts`: where one server's time goes under the bench's
 * load. The server runs with `node --cpu-prof` (one CPU, as in `npm run bench`), answers
 * `--seconds` of one call at `--connections` connections after a warm-up, and stops; the
 * profile (of the server's whole run, warm-up included) is written to `--dir` (open it in
 * Chrome DevTools) and summed up here: the main thread's busy samples by package and by
 * function (self time).
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { compileServers } from "./build.js";
import { CALL_NAMES, CALLS, type CallName } from "./calls.js";
import { startServer } from "./child.js";
import { pinCpus } from "./cpus.js";
import { brokenBecause, load } from "./load.js";
import { progress, runHarness } from "./process.js";
import { SERVERS } from "./servers/catalog.js";

const USAGE = `Usage: npx tsx bench/profile.ts [options]

  --server <id>        server to profile (default provider-registry)
  --call <name>        status or bind-app (default bind-app)
  --seconds <s>        seconds of load profiled, after 3 s of warm-up (default 8)
  --connections <n>    concurrent connections (default 20, as npm run bench)
  --dir <dir>          where the .cpuprofile goes (default .tmp/profiles)
  --top <n>            functions listed (default 25)
  --help`;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

/** A frame's package (`router`, `zod`), Node's module (`node:_http_server`), or the provider-kit file. */
function packageOf({ url, functionName }: ProfileNode["callFrame"]): string {
  if (url === "") return `(${functionName || "native"})`;
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (dependency !== undefined) return dependency;
  if (url.startsWith("node:")) return url;
  return /packages\/([^/]+)\/dist\//.exec(url)?.[1] ?? url.slice(url.lastIndexOf("/") + 1);
}

function functionOf(frame: ProfileNode["callFrame"]): string {
  return `${frame.functionName || "(anonymous)"} ${packageOf(frame)}${frame.url.includes("/dist/") ? `/${frame.url.slice(frame.url.indexOf("/dist/") + 6)}` : ""}:${frame.lineNumber + 1}`;
}

/** Busy samples (all but idle) by package and by function, as shares of the busy samples. */
function summarize(profile: CpuProfile, top: number): string[] {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const frame = frames.get(id)!;
    if (frame.functionName === "(idle)") continue;
    busy += 1;
    byPackage.set(packageOf(frame), (byPackage.get(packageOf(frame)) ?? 0) + 1);
    byFunction.set(functionOf(frame), (byFunction.get(functionOf(frame)) ?? 0) + 1);
  }
  const ranked = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => `${((100 * count) / busy).toFixed(1).padStart(5)}%  ${name}`);
  return [`${busy} busy samples of ${profile.samples.length}`, "", "Self time by package:", ...ranked(byPackage), "", "Self time by function:", ...ranked(byFunction)];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      server: { type: "string", default: "provider-registry" },
      call: { type: "string", default: "bind-app" },
      seconds: { type: "string", default: "8" },
      connections: { type: "string", default: "20" },
      dir: { type: "string", default: ".tmp/profiles" },
      top: { type: "string", default: "25" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const spec = SERVERS.find((server) => server.id === values.server);
  if (spec === undefined || spec.redis) throw new Error(`--server must be one of ${SERVERS.filter((s) => !s.redis).map((s) => s.id).join(", ")}.`);
  if (!CALL_NAMES.includes(values.call as CallName)) throw new Error(`--call must be one of ${CALL_NAMES.join(", ")}.`);
  const call = CALLS[values.call as CallName];
  const dir = resolve(values.dir);
  mkdirSync(dir, { recursive: true });
  const cpus = pinCpus(true);
  progress("compiling the framework and the servers");
  compileServers();
  const before = new Set(readdirSync(dir, { withFileTypes: true }).map((entry) => entry.name));
  const server = await startServer(spec, {
    cpu: cpus.server,
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
    stdoutFile: spec.logs ? join(dir, `${spec.id}.log`) : undefined,
  });
  try {
    await load(server.baseUrl, call, { seconds: 3 }, Number(values.connections));
    const measured = await load(server.baseUrl, call, { seconds: Number(values.seconds) }, Number(values.connections));
    const broken = brokenBecause(measured);
    if (broken) throw new Error(`${spec.id} ${call.name}: ${broken}.`);
    progress(`${spec.id} ${call.name}: ${measured.requests} calls in the profiled load, plus the warm-up's`);
  } finally {
    await server.stop();
  }
  const written = readdirSync(dir).find((name) => name.endsWith(".cpuprofile") && !before.has(name));
  if (written === undefined) throw new Error(`No new .cpuprofile in ${dir}.`);
  const file = join(dir, written);
  console.log([`${spec.id} ${call.name}, ${cpus.note}: ${file}`, "", ...summarize(JSON.parse(readFileSync(file, "utf8")) as CpuProfile, Number(values.top))].join("\n"));
  return 0;
}

runHarness(main);
