/**
 * Summarize a V8 CPU profile of a server child (`npm run bench -- --profile <dir>`):
 * self time by area (a package, a provider-kit source file, Node's internals, GC) and the
 * hottest functions. Usage: npx tsx bench/profile.ts <file.cpuprofile | directory> [top=25]
 * A directory holds one profile per thread of one server; the largest is its main thread
 * (the others are short-lived helper threads, such as the TypeScript loader's).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Module loading and the TypeScript loader: start-up cost, not per-request cost. */
const STARTUP = /^(node:internal\/modules\/|node:internal\/bootstrap\/|wasm:\/\/)|node_modules\/(tsx|esbuild)\//;

/** Where a function lives, coarse enough to say which layer costs what. */
function areaOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  if (STARTUP.test(url)) return "(start-up: module loading)";
  const nodeModule = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nodeModule) return nodeModule[1]!;
  const ownFile = /\/(src\/.+|bench\/.+)$/.exec(url);
  if (ownFile) return ownFile[1]!;
  const internal = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (internal) return `node:${internal[1]}`;
  return url;
}

function top(totals: Map<string, number>, total: number, count: number): string[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => `${((100 * micros) / total).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(6)} ms  ${name}`);
}

function summarize(path: string, count: number): string[] {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfTime = new Map<number, number>();
  profile.samples.forEach((id, index) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of selfTime) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") continue;
    busy += micros;
    const area = areaOf(url, functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
    const where = url === "" ? "" : ` (${area}:${lineNumber + 1})`;
    const name = `${functionName || "(anonymous)"}${where}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  }
  return [
    `${path}: ${(busy / 1000).toFixed(0)} ms busy (idle excluded)`,
    "",
    "Self time by area:",
    ...top(byArea, busy, count),
    "",
    "Hottest functions (self time):",
    ...top(byFunction, busy, count),
  ];
}

function mainThreadProfile(path: string): string {
  if (!statSync(path).isDirectory()) return path;
  const largest = readdirSync(path)
    .filter((name) => name.endsWith(".cpuprofile"))
    .map((name) => join(path, name))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (!largest) throw new Error(`No .cpuprofile in ${path}: run npm run bench -- --profile <dir> first.`);
  return largest;
}

const [target, topArg] = process.argv.slice(2);
if (!target) {
  console.error("Usage: npx tsx bench/profile.ts <file.cpuprofile | directory> [top=25]");
  process.exit(2);
}
console.log(summarize(mainThreadProfile(target), Number(topArg ?? 25)).join("\n"));
