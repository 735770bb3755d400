/**
 * Summaries of the V8 CPU profiles the harness writes with `--profile <dir>`: self time by area
 * (a package, a provider-kit source file, Node's internals, GC) and the hottest functions,
 * in µs per request when the harness left the request count next to the profiles.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** Written by the harness next to a server's profiles: `{ "requests": n }`. */
export const REQUESTS_FILE = "requests.json";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
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

/**
 * A directory holds one profile per thread of one server; the largest is its main thread
 * (the others are short-lived helper threads, such as the TypeScript loader's).
 */
export function mainThreadProfile(path: string): string {
  if (!statSync(path).isDirectory()) return path;
  const largest = readdirSync(path)
    .filter((name) => name.endsWith(".cpuprofile"))
    .map((name) => join(path, name))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (!largest) throw new Error(`No .cpuprofile in ${path}: run npm run bench -- --profile <dir> first.`);
  return largest;
}

function requestCount(profilePath: string): number | undefined {
  const file = join(dirname(profilePath), REQUESTS_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { requests: number }).requests : undefined;
}

function top(totals: Map<string, number>, busy: number, requests: number | undefined, count: number): string[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => {
      const perRequest = requests ? `${(micros / requests).toFixed(2).padStart(7)} µs/req  ` : "";
      return `${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${perRequest}${name}`;
    });
}

function functionKey(node: ProfileNode): { name: string; area: string } {
  const { functionName, url, lineNumber, columnNumber } = node.callFrame;
  const area = areaOf(url, functionName);
  // Line and column in the code V8 ran (for TypeScript run through tsx: the transpiled code).
  const where = url === "" ? "" : ` (${area}:${lineNumber + 1}:${columnNumber + 1})`;
  return { name: `${functionName || "(anonymous)"}${where}`, area };
}

export function summarizeProfile(target: string, count: number): string[] {
  const path = mainThreadProfile(target);
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfTime = new Map<number, number>();
  profile.samples.forEach((id, index) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  // Inclusive: time of every sample with the function anywhere on its stack (counted once).
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of selfTime) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === "(idle)") continue;
    busy += micros;
    const { name, area } = functionKey(node);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = functionKey(byId.get(at)!);
      if (frame.area.startsWith("src/") || frame.area.startsWith("bench/")) onStack.add(frame.name);
    }
    for (const frame of onStack) inclusive.set(frame, (inclusive.get(frame) ?? 0) + micros);
  }
  const requests = requestCount(path);
  const perRequest = requests ? `, ${requests} requests: ${(busy / requests).toFixed(1)} µs/req in all, start-up included` : "";
  return [
    `${path}: ${(busy / 1000).toFixed(0)} ms busy (idle excluded)${perRequest}`,
    "",
    "Self time by area:",
    ...top(byArea, busy, requests, count),
    "",
    "Hottest functions (self time):",
    ...top(byFunction, busy, requests, count),
    "",
    "Project functions, inclusive time (everything they call; nested ones overlap):",
    ...top(inclusive, busy, requests, count),
  ];
}
