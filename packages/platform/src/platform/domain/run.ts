/**
 * `run`: the command runs as a local process, `/bin/sh -c <command>`, with the app's process
 * environment (processEnv: a service's variables only where they steer no tool), once or once
 * per unit. Beyond the app's variables it keeps only PATH (to find the programs) and HOME. Output goes to the answer and the app's log, one
 * entry per line with its unit. Each run is a process group of its own: at the time limit, at
 * the output cap, or once the shell exits, the whole group is stopped, background children too,
 * and so is every process still carrying the run's marker variable in its environment: those
 * that left the group for a session of their own (`setsid`) as well.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { Readable } from "node:stream";
import { tmpdir } from "node:os";
import { appFor } from "./apps.js";
import type { RunLimits } from "./config.js";
import { appLog, LOG_LINES, type Actor, type Context } from "./context.js";
import { badRequest, forbidden, tooManyRequests } from "./errors.js";
import { processEnv } from "./env.js";
import type { Unit } from "./model.js";

/** Set in each run's environment, so its processes are found however they left its group. */
const RUN_MARKER = "PROVIDER_KIT_RUN";

/** The processes whose environment holds `RUN_MARKER=<id>` (Linux's /proc; none where there is none). */
async function markedProcesses(id: string): Promise<number[]> {
  const marker = Buffer.from(`\0${RUN_MARKER}=${id}\0`);
  const pids = (await readdir("/proc").catch(() => [])).filter((entry) => /^\d+$/.test(entry)).map(Number);
  const environs = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/environ`).catch(() => undefined)));
  return pids.filter((_pid, index) => {
    const environ = environs[index];
    return environ !== undefined && Buffer.concat([Buffer.from([0]), environ]).includes(marker);
  });
}

/** SIGKILL to every process of the run outside its group; one that cleared its environment escapes (run is a shell as this OS user). */
async function killMarked(id: string): Promise<void> {
  for (const pid of await markedProcesses(id)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

/** How long a group stopped with SIGTERM has before SIGKILL. */
const TERM_GRACE_MS = 2_000;
/** How long, once the shell exited, its output pipes may take to close. */
const DRAIN_MS = 1_000;

export interface RunResult {
  output: string;
  /** Exit code per unit, in order; null when the command was stopped (time limit or output cap). */
  exitCodes: Array<number | null>;
}

/** Runs in flight per user, per platform. */
const running = new WeakMap<Context, Map<string, number>>();

export async function runCommand(context: Context, actor: Actor, name: string, command: string, once: boolean): Promise<RunResult> {
  if (command.trim() === "") throw badRequest("Send the command to run as the plain-text body.");
  const app = await appFor(context, actor, name);
  // run hands out this machine's OS user: not even the admin gets it for an app of teams it is not in.
  if (!app.teams.some((team) => actor.teams.includes(team))) {
    throw forbidden(`Only members of the app's teams (${app.teams.join(", ")}) may run commands on "${name}": ask to be added to one.`);
  }
  if (app.units.length === 0) throw badRequest(`The app "${name}" has no units to run the command on: add one with PUT /apps/${name}/units.`);
  const limits = context.config.run;
  const counts = running.get(context) ?? new Map<string, number>();
  running.set(context, counts);
  const mine = counts.get(actor.email) ?? 0;
  if (mine >= limits.perUser) {
    throw tooManyRequests(`You already have ${mine} commands running (at most ${limits.perUser} at once): wait for one to finish.`);
  }
  counts.set(actor.email, mine + 1);
  try {
    const env = processEnv(app);
    const units = once ? app.units.slice(0, 1) : app.units;
    let output = "";
    const exitCodes: Array<number | null> = [];
    for (const unit of units) {
      const result = await runOnUnit(command, env, unit, limits);
      output += result.output;
      exitCodes.push(result.code);
      const lines = result.output.trimEnd().split("\n");
      // One entry per line of output, as a unit's process writes them; the log keeps the newest anyway.
      for (const line of lines.slice(-LOG_LINES)) await appLog(context, app.name, line || "(no output)", "app-run", unit.name);
    }
    return { output, exitCodes };
  } finally {
    const left = (counts.get(actor.email) ?? 1) - 1;
    if (left > 0) counts.set(actor.email, left);
    else counts.delete(actor.email);
  }
}

/** The app's environment or the machine refused the process (E2BIG, EAGAIN...): the user's to see, not a platform fault. */
const notStarted = (error: Error) =>
  badRequest(`The command could not be started: ${error.message}. Check the app's environment (GET /apps/<app>/env) and the machine's limits.`);

function runOnUnit(command: string, env: Record<string, string>, unit: Unit, limits: RunLimits): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const id = randomBytes(12).toString("hex");
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn("/bin/sh", ["-c", command], {
        cwd: tmpdir(),
        // The platform's PATH and HOME win over anything recorded for the app.
        env: { ...env, PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir(), TSURU_UNIT: unit.name, [RUN_MARKER]: id },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true, // its own process group, so the whole group can be stopped
      });
    } catch (error) {
      // Some refusals (E2BIG) are thrown at once, others come as an "error" event.
      reject(notStarted(error as Error));
      return;
    }
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group is gone already.
      }
    };
    let output = "";
    let stopped = false;
    let killTimer: NodeJS.Timeout | undefined;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      signalGroup("SIGTERM");
      killTimer = setTimeout(() => signalGroup("SIGKILL"), TERM_GRACE_MS);
    };
    const deadline = setTimeout(stop, limits.timeoutMs);
    const collect = (chunk: Buffer) => {
      if (output.length >= limits.outputBytes) return;
      output += chunk.toString("utf8");
      if (output.length >= limits.outputBytes) stop();
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("error", (error) => {
      clearTimeout(deadline);
      reject(notStarted(error));
    });
    // The shell's exit ends the run: what it left in the background goes with its group, and the
    // answer waits only for the output already written (a process that left the group is cut off).
    let exitCode: number | null = null;
    child.on("exit", (code) => {
      exitCode = code;
      clearTimeout(deadline);
      clearTimeout(killTimer);
      signalGroup("SIGKILL");
      void killMarked(id);
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, DRAIN_MS).unref();
    });
    child.on("close", () => resolve({ output: output.slice(0, limits.outputBytes), code: stopped ? null : exitCode }));
  });
}
