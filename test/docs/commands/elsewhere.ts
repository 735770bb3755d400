/**
 * The commands the pages show that the doc walks do not run: those run for the benchmarks'
 * figures, those an existing test (or CI's script) runs, and the few that cannot run here.
 * commands.test.ts checks each entry still matches a command and, for tests, that the file
 * really runs it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "../markdown-files.js";

/** A page (relative to the root), or a section of it: `page#Heading text`. */
type Where = string;

export interface RunByTest {
  commands: readonly (string | RegExp)[];
  where: readonly Where[];
  /** The test (or script) that runs them, relative to the root. */
  file: string;
  /** What that file must contain: the invocation, with its subcommand and key flags. */
  contains: readonly string[];
}

export interface NotRunnableHere {
  commands: readonly (string | RegExp)[];
  where: readonly Where[];
  why: string;
}

/** (b) The bench scripts, run for the figures of docs/benchmarks.md; CONTRIBUTING.md lists the same ones. */
export const BENCH_PAGES: readonly Where[] = ["docs/benchmarks.md", "CONTRIBUTING.md#Benchmarks"];

/** The bench script the command runs (a file under bench/), or undefined when it runs anything else. */
export function benchScript(command: string): string | undefined {
  const npm = /^(?:BENCH_[A-Z_]+=\S+ )*npm run (bench(?::[a-z]+)?)(?: -- .*)?$/.exec(command);
  if (npm) {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    return /^tsx (?:--conditions=source )?(bench\/[\w-]+\.ts)$/.exec(scripts[npm[1]!] ?? "")?.[1];
  }
  return /^npx tsx (bench\/[\w-]+\.ts)(?: .*)?$/.exec(command)?.[1];
}

const TEMPLATE_PROJECT = "packages/provider-kit/test/template/project.test.ts";
const STARTING_GUIDES = ["README.md#A provider of your own", "docs/guide/getting-started.md"];

/** (c) Run by an existing test, or by CI's script on every change. */
export const RUN_BY_TESTS: readonly RunByTest[] = [
  { commands: ["npm ci"], where: ["README.md", "CONTRIBUTING.md", "examples/redis/README.md", "docs/tools/platform.md"], file: ".ci/run", contains: ["npm ci"] },
  { commands: ["npm test"], where: ["README.md#Quick start", "CONTRIBUTING.md"], file: ".ci/run", contains: ["npm test"] },
  { commands: ["npm run typecheck", "npm run lint"], where: ["CONTRIBUTING.md"], file: ".ci/run", contains: ["npm run typecheck", "npm run lint"] },
  { commands: ["npm run build"], where: ["CONTRIBUTING.md"], file: "test/global-setup.ts", contains: ['"npm", ["run", "build"]'] },
  // A project made by `init`, as the guides show it.
  { commands: ["node /path/to/provider-kit/packages/provider-kit/dist/cli/main.js init my-service"], where: STARTING_GUIDES, file: TEMPLATE_PROJECT, contains: ['"dist", "cli", "main.js"', '[cli, "init", project]'] },
  { commands: ["cd my-service && npm install", "cd my-service", "npm install"], where: STARTING_GUIDES, file: TEMPLATE_PROJECT, contains: ['run("npm", ["install"], { cwd: project })'] },
  { commands: ["npm test"], where: STARTING_GUIDES, file: TEMPLATE_PROJECT, contains: ['run("npm", ["test"]'] },
  { commands: ["npm start"], where: STARTING_GUIDES, file: TEMPLATE_PROJECT, contains: ['startLongRunning("npm", ["start"]'] },
  { commands: ["npm run dev"], where: ["docs/guide/getting-started.md"], file: TEMPLATE_PROJECT, contains: ['startLongRunning("npm", ["run", "dev"]'] },
  { commands: ["npx provider-kit dev"], where: ["docs/guide/getting-started.md"], file: TEMPLATE_PROJECT, contains: ['startLongRunning("npx", ["provider-kit", "dev", "--port", "0"]'] },
  { commands: ["npm run build", /^PROVIDER_USERNAME=\S+ PROVIDER_PASSWORD=\S+ REGISTRY_STORE=\S+ node dist\/main\.js$/], where: ["docs/operations/running.md"], file: TEMPLATE_PROJECT, contains: ['run("npm", ["run", "build"]', '"dist/main.js"', "REGISTRY_STORE: redisUrl"] },
  { commands: ["npx provider-kit manifest --endpoint https://my-service.example.com > service.yaml"], where: ["docs/guide/getting-started.md"], file: TEMPLATE_PROJECT, contains: ['"provider-kit", "manifest", "--endpoint"'] },
  { commands: ["npx provider-kit manifest --actions src/actions.ts > service-actions.json"], where: ["docs/guide/actions.md"], file: TEMPLATE_PROJECT, contains: ['"provider-kit", "manifest", "--actions", "src/actions.ts"'] },
  { commands: ['PROVIDER_KIT_PASSWORD="$PROVIDER_PASSWORD" npx provider-kit check --osb --url http://127.0.0.1:8080 --username redis'], where: ["docs/guide/osb.md"], file: "packages/conformance/test/conformance/cli.test.ts", contains: ['check(["--osb", "--url", broker.url', "PROVIDER_KIT_PASSWORD"] },
  { commands: ["npx provider-kit check --url http://127.0.0.1:8080 --username myservice --password 's3cret'"], where: ["docs/tools/conformance.md"], file: TEMPLATE_PROJECT, contains: ['"provider-kit", "check", "--url"', '"--username", username'] },
  { commands: [/^PLATFORM_ADMIN_EMAIL=\S+ PLATFORM_ADMIN_PASSWORD=\.\.\. npx provider-kit platform \[options\]$/], where: ["docs/tools/platform.md#Running it"], file: TEMPLATE_PROJECT, contains: ['startLongRunning("npx", ["provider-kit", "platform"', "PLATFORM_ADMIN_EMAIL"] },
  { commands: [/^npx provider-kit check --url "\$PROVIDER_URL" --username "\$PROVIDER_USER" --format junit --output conformance\.xml$/], where: ["docs/tools/conformance.md"], file: "packages/conformance/test/conformance/cli.test.ts", contains: ['"--format", "junit", "--output"', "PROVIDER_KIT_PASSWORD"] },
  // The same PUT as the walk's for the Redis example, for the guide's service.
  { commands: [/^curl -X PUT -H "Authorization: bearer \$TSURU_TOKEN" -H "Content-Type: application\/json" --data @service-actions\.json "\$TSURU_TARGET\/1\.31\/services\/my-service\/manifest"$/], where: ["docs/guide/actions.md"], file: "packages/platform/test/platform/proxy-actions.test.ts", contains: ['put("/1.31/services/kv/manifest", { json })'] },
];

/** (d) Cannot run here, by nature. */
export const NOT_RUNNABLE_HERE: readonly NotRunnableHere[] = [
  {
    commands: [/^docker (build|run) /],
    where: ["examples/redis/README.md", "docs/operations/running.md", "docs/guide/recipes.md"],
    why: "no Docker engine on this machine (the Dockerfiles have not been built here, as the pages say)",
  },
  {
    commands: [/^tsuru /],
    where: ["docs/tools/platform.md", "docs/guide/getting-started.md"],
    why: "the tsuru client cannot be installed here; packages/platform/test/platform/tsuru-client.test.ts replays its requests against the platform",
  },
  {
    commands: ["npm run test:fast", "npm run test:slow"],
    where: ["CONTRIBUTING.md", "README.md#Quick start"],
    why: "the test suite this check belongs to (CI runs npm test, both sets)",
  },
  {
    // Every line of the measuring block of "What a provider installs".
    commands: [/^\(cd (packages\/(provider-kit|redis-store) && npm pack|base && npm init|kit && npm init|redis && npm init) |^cd \/tmp\/fp && mkdir base kit redis$/],
    where: ["docs/operations/running.md#What a provider installs"],
    why: "a measurement: installs the packed packages and their dependencies from the npm registry into /tmp; its figures are in the table under it",
  },
  {
    commands: ["bash .ci/run"],
    where: ["CONTRIBUTING.md"],
    why: "CI's entry point: installs packages with apt-get, then runs npm ci, the whole suite, typecheck, lint and build",
  },
  {
    // Every command of the section's two blocks: the demo's servers, the provider on them, the calls around the kill.
    commands: [/^(D=\$PWD\/\.redis-data\/sentinel-demo[; ]|redis-server --port 47(?:379|380|381) |for port in 47390 |REDIS_URL=redis:\/\/127\.0\.0\.1:47379 |redis-cli -p 47|kill -9 |curl -u \$A .*\$P\/resources)/],
    where: ["examples/redis/README.md#Registry on Redis Sentinel"],
    why:
      "daemonized servers on fixed ports outside any test's reach, run by hand for the timings they show (~4 s, ~10 s); " +
      "the same failover runs on free ports in examples/redis/test/sentinel.test.ts and packages/provider-kit/test/lifecycle/failover.test.ts",
  },
  {
    commands: [
      "npm pack --pack-destination /tmp",
      "mkdir /tmp/p && cd /tmp/p && npm init -y && npm pkg set type=module",
      "time npm install --prefer-offline --no-audit --no-fund /tmp/provider-kit-0.1.0.tgz",
      /^node -e 'console\.log\(Object\.keys\(require\("\.\/node_modules\/\.package-lock\.json"\)\.packages\)\.length\)'$/,
      "du -sh node_modules",
    ],
    where: ["docs/guide/getting-started.md#What installing provider-kit brings"],
    why: "run for the install figures above them; npm pack rebuilds dist/, which the slow tests read while they run",
  },
];
