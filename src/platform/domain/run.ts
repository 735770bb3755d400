/**
 * `run`: the command runs as a local process, `sh -c <command>`, with exactly the environment
 * the app's units would get, once or once per unit. Beyond the app's variables it keeps only
 * PATH (to find the programs) and HOME. Output goes to the answer and the app's log, one
 * entry per line with its unit.
 */
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { appFor } from "./apps.js";
import { appLog, LOG_LINES, type Actor, type Context } from "./context.js";
import { badRequest, forbidden } from "./errors.js";
import { processEnv } from "./env.js";
import type { Unit } from "./model.js";

const MAX_OUTPUT = 1 << 20;
const RUN_TIMEOUT_MS = 60_000;

export interface RunResult {
  output: string;
  /** Exit code per unit, in order; null when the command was stopped (timeout). */
  exitCodes: Array<number | null>;
}

export async function runCommand(context: Context, actor: Actor, name: string, command: string, once: boolean): Promise<RunResult> {
  if (command.trim() === "") throw badRequest("Send the command to run as the plain-text body.");
  const app = await appFor(context, actor, name);
  // run hands out this machine's OS user: not even the admin gets it for an app of teams it is not in.
  if (!app.teams.some((team) => actor.teams.includes(team))) {
    throw forbidden(`Only members of the app's teams (${app.teams.join(", ")}) may run commands on "${name}": ask to be added to one.`);
  }
  if (app.units.length === 0) throw badRequest(`The app "${name}" has no units to run the command on: add one with PUT /apps/${name}/units.`);
  const env = processEnv(app);
  const units = once ? app.units.slice(0, 1) : app.units;
  let output = "";
  const exitCodes: Array<number | null> = [];
  for (const unit of units) {
    const result = await runOnUnit(command, env, unit);
    output += result.output;
    exitCodes.push(result.code);
    const lines = result.output.trimEnd().split("\n");
    // One entry per line of output, as a unit's process writes them; the log keeps the newest anyway.
    for (const line of lines.slice(-LOG_LINES)) await appLog(context, app.name, line || "(no output)", "app-run", unit.name);
  }
  return { output, exitCodes };
}

function runOnUnit(command: string, env: Record<string, string>, unit: Unit): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir(), ...env, TSURU_UNIT: unit.name },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: RUN_TIMEOUT_MS,
    });
    let output = "";
    const collect = (chunk: Buffer) => {
      if (output.length < MAX_OUTPUT) output += chunk.toString("utf8");
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("error", reject);
    child.on("close", (code) => resolve({ output: output.slice(0, MAX_OUTPUT), code }));
  });
}
