/**
 * Running a page's commands as a reader does: each one as the page shows it, in a real bash,
 * with only ports and directories put in its place. Short commands run one after the other in
 * one bash (the reader's terminal: a variable one sets is seen by the next); a server runs in
 * a bash of its own (another terminal) and is waited on by what it prints.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { childEnv, startLongRunning, type LongRunning } from "../../support/processes.js";
import { ROOT } from "../markdown-files.js";
import { commandsOf, type DocCommand } from "./extract.js";
import type { Walk } from "./walks.js";

export interface Ran {
  code: number;
  stdout: string;
  /** Without the status lines of curl. */
  stderr: string;
  /** The HTTP status of each answer curl received, in order. */
  statuses: number[];
}

const DONE = "__doc-walk-done__";
/** curl reads it from $CURL_HOME: the status of every answer on stderr, so a command's own output is untouched. */
const CURLRC = 'write-out = "%{stderr}curl answered %{http_code}\\n"\n';
const STATUS_LINE = /^curl answered (\d{3})\n/gm;

/** One bash, as the reader's terminal, in the repository's root. */
export class Terminal {
  private stdout = "";
  private stderr = "";
  private waiting: (() => void) | undefined;

  private constructor(
    private readonly bash: ChildProcessWithoutNullStreams,
    private readonly curlHome: string,
  ) {
    bash.stdout.setEncoding("utf8").on("data", (chunk: string) => this.received(() => (this.stdout += chunk)));
    bash.stderr.setEncoding("utf8").on("data", (chunk: string) => this.received(() => (this.stderr += chunk)));
    bash.once("close", () => this.received(() => {}));
  }

  static async open(): Promise<Terminal> {
    const curlHome = await mkdtemp(path.join(tmpdir(), "doc-walk-curl-"));
    await writeFile(path.join(curlHome, ".curlrc"), CURLRC);
    const bash = spawn("bash", ["--noprofile", "--norc"], { cwd: ROOT, env: childEnv({ CURL_HOME: curlHome }) });
    return new Terminal(bash, curlHome);
  }

  private received(append: () => void): void {
    append();
    this.waiting?.();
  }

  /** Runs `command` (its stdin empty) and resolves once it has finished, with what it printed. */
  async run(command: string): Promise<Ran> {
    if (this.waiting) throw new Error("one command at a time");
    this.stdout = this.stderr = "";
    const finished = new Promise<void>((resolve, reject) => {
      this.waiting = () => {
        if (this.stdout.includes(`\n${DONE} `) && this.stdout.endsWith("\n") && this.stderr.includes(`\n${DONE}\n`)) resolve();
        else if (this.bash.exitCode !== null) reject(new Error(`bash exited while running: ${command}\n${this.stderr}`));
      };
    });
    this.bash.stdin.write(`{ ${command}\n} </dev/null\nprintf '\\n${DONE} %d\\n' "$?"\nprintf '\\n${DONE}\\n' >&2\n`);
    await finished.finally(() => (this.waiting = undefined));
    const [stdout = "", code = ""] = this.stdout.split(`\n${DONE} `);
    const stderr = this.stderr.slice(0, this.stderr.lastIndexOf(`\n${DONE}\n`));
    return {
      code: Number(code.trim()),
      stdout,
      stderr: stderr.replace(STATUS_LINE, ""),
      statuses: [...stderr.matchAll(STATUS_LINE)].map((match) => Number(match[1])),
    };
  }

  async close(): Promise<void> {
    const closed = new Promise((resolve) => this.bash.once("close", resolve));
    this.bash.stdin.end("exit\n");
    await closed;
    await rm(this.curlHome, { recursive: true, force: true });
  }
}

/**
 * A walk through its pages' commands: finds each in the pages, puts this run's ports and
 * directories in place of the page's, and records what ran.
 */
export class DocWalk<W extends Walk> {
  readonly ran = new Set<keyof W["commands"] & string>();
  private readonly shownCommands: DocCommand[];
  /** The page's value, and this run's in its place. */
  private readonly replacements: [shown: string, actual: string][] = [];

  constructor(
    private readonly walk: W,
    private readonly terminal: Terminal,
  ) {
    this.shownCommands = walk.docs.flatMap((doc) => commandsOf(doc, readFileSync(path.join(ROOT, doc), "utf8")));
    for (const command of Object.values(walk.commands)) {
      if (!this.shownCommands.some((shown) => shown.text === command)) throw new Error(`${walk.docs.join(", ")}: no command ${command}`);
    }
  }

  /** From now on `shown` (a port, a path) reads `actual` in the commands, and back in what they print. */
  replace(shown: string, actual: string): void {
    this.replacements.push([shown, actual]);
  }

  /** The command as this run types it. */
  command(name: keyof W["commands"] & string): string {
    return this.replacements.reduce((text, [shown, actual]) => text.replaceAll(shown, actual), this.walk.commands[name]!);
  }

  /** The output the page shows under the command (`# ` lines), one entry per line. */
  shown(name: keyof W["commands"] & string): string[] {
    return this.shownCommands.find((command) => command.text === this.walk.commands[name] && command.shown.length > 0)?.shown ?? [];
  }

  /** `output` with this run's values put back as the page shows them. */
  asShown(output: string): string {
    return this.replacements.reduce((text, [shown, actual]) => text.replaceAll(actual, shown), output);
  }

  /** Runs the command in the terminal. */
  async run(name: keyof W["commands"] & string): Promise<Ran> {
    this.ran.add(name);
    return this.terminal.run(this.command(name));
  }

  /** Runs a command of the reader's own in the terminal (their settings), not one of the page's: not recorded. */
  async runOwn(command: string): Promise<Ran> {
    return this.terminal.run(command);
  }

  /** Starts the command in a bash of its own, with `env` added (the settings it reads to choose a port or a folder). */
  start(name: keyof W["commands"] & string, env: Record<string, string>): LongRunning {
    this.ran.add(name);
    return startLongRunning("bash", ["-c", this.command(name)], { cwd: ROOT, env });
  }
}
