/**
 * Every command a page shows is run by a test or was run for the figure next to it: each
 * command of every shell block is run by a doc walk (walks.ts), is a bench script of the
 * benchmarks' figures, is run by an existing test, or is listed as not runnable here, with why
 * (elsewhere.ts). The tables are checked too, so that they cannot rot.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DOC_PAGES, ROOT } from "../markdown-files.js";
import { BENCH_PAGES, benchScript, NOT_RUNNABLE_HERE, RUN_BY_TESTS } from "./elsewhere.js";
import { commandsOf, withoutComment, type DocCommand } from "./extract.js";
import { WALKS } from "./walks.js";

/** Generated from the checks' catalog; its one command is the generator's. */
const GENERATED = "docs/conformance-checks.md";

const commands: DocCommand[] = DOC_PAGES.map((page) => path.relative(ROOT, page))
  .filter((page) => page !== GENERATED)
  .flatMap((page) => commandsOf(page, readFileSync(path.join(ROOT, page), "utf8")));

const matches = (pattern: string | RegExp, text: string) => (typeof pattern === "string" ? pattern === text : pattern.test(text));
const isIn = (command: DocCommand, where: readonly string[]) =>
  where.some((place) => place === command.file || place === `${command.file}#${command.section}`);

type Kind = "walked" | "bench" | "test" | "not runnable";

function kindOf(command: DocCommand): Kind | undefined {
  if (Object.values(WALKS).some((walk) => walk.docs.includes(command.file) && Object.values(walk.commands).includes(command.text))) return "walked";
  if (isIn(command, BENCH_PAGES) && benchScript(command.text) !== undefined) return "bench";
  const listed = (entry: { commands: readonly (string | RegExp)[]; where: readonly string[] }) =>
    isIn(command, entry.where) && entry.commands.some((pattern) => matches(pattern, command.text));
  if (RUN_BY_TESTS.some(listed)) return "test";
  if (NOT_RUNNABLE_HERE.some(listed)) return "not runnable";
  return undefined;
}

describe("the commands the docs show", () => {
  it("are found in every shell block", () => {
    expect(commands.length).toBeGreaterThan(100);
    expect(new Set(commands.map((command) => command.file))).toContain("docs/tools/platform.md");
  });

  it("are each run by a doc walk, a test or a bench, or listed as not runnable here", () => {
    const unaccounted = commands
      .filter((command) => kindOf(command) === undefined)
      .map((command) => `${command.file}:${command.line}: ${command.text}`);
    expect(
      unaccounted,
      "Run each of these in a doc walk (test/docs/commands/walks.ts and walks.test.ts), or list it in " +
        "test/docs/commands/elsewhere.ts: RUN_BY_TESTS with the test that runs it, or NOT_RUNNABLE_HERE with why",
    ).toEqual([]);
  });

  it.each(Object.entries(WALKS))("walk %s: each command is on one of its pages", (_name, walk) => {
    const shown = commands.filter((command) => walk.docs.includes(command.file)).map((command) => command.text);
    expect(Object.values(walk.commands).filter((command) => !shown.includes(command))).toEqual([]);
  });

  it("bench commands run scripts that exist", () => {
    const benches = commands.filter((command) => kindOf(command) === "bench");
    expect(benches.length).toBeGreaterThan(0);
    for (const command of benches) expect(existsSync(path.join(ROOT, benchScript(command.text)!)), command.text).toBe(true);
  });

  it.each(RUN_BY_TESTS.map((entry) => [entry.commands.join(", "), entry]))("%s: still shown, and run by the file named", (_name, entry) => {
    for (const pattern of entry.commands) {
      expect(commands.some((command) => isIn(command, entry.where) && matches(pattern, command.text)), `${String(pattern)} in ${entry.where.join(", ")}`).toBe(true);
    }
    const runner = readFileSync(path.join(ROOT, entry.file), "utf8");
    for (const invocation of entry.contains) expect(runner, `${entry.file} should run it`).toContain(invocation);
  });

  it.each(NOT_RUNNABLE_HERE.map((entry) => [entry.commands.join(", "), entry]))("%s: still shown", (_name, entry) => {
    for (const pattern of entry.commands) {
      expect(commands.some((command) => isIn(command, entry.where) && matches(pattern, command.text)), `${String(pattern)} in ${entry.where.join(", ")}`).toBe(true);
    }
  });
});

describe("reading commands out of a page", () => {
  it("joins continuations, drops comments, keeps a loop whole and takes the comment lines under a command as its output", () => {
    const page = [
      "# Title",
      "```sh",
      "# a comment before",
      "curl -u $A -d 'a # not a comment' \\",
      "  $P/resources   # 201",
      "# {\"shown\":true}",
      "",
      "for port in 1 2; do",
      "  echo $port",
      "done",
      "until curl -sf $P; do sleep 1; done",
      "echo next",
      "```",
      "```",
      "not a command",
      "```",
    ].join("\n");
    expect(commandsOf("page.md", page)).toEqual([
      { file: "page.md", line: 4, section: "Title", text: "curl -u $A -d 'a # not a comment' $P/resources", shown: ['{"shown":true}'] },
      { file: "page.md", line: 8, section: "Title", text: "for port in 1 2; do\necho $port\ndone", shown: [] },
      { file: "page.md", line: 11, section: "Title", text: "until curl -sf $P; do sleep 1; done", shown: [] },
      { file: "page.md", line: 12, section: "Title", text: "echo next", shown: [] },
    ]);
  });

  it("takes console blocks' prompted lines as commands and the rest as their output", () => {
    const page = ["```console", "$ npm start \\", ">   --silent", "listening", "$ echo hi # greet", "hi", "```"].join("\n");
    expect(commandsOf("page.md", page)).toEqual([
      { file: "page.md", line: 2, section: "", text: "npm start --silent", shown: ["listening"] },
      { file: "page.md", line: 5, section: "", text: "echo hi", shown: ["hi"] },
    ]);
  });

  it("ends a comment only outside quotes", () => {
    expect(withoutComment(`echo "a # b" 'c # d' e#f # g`)).toBe(`echo "a # b" 'c # d' e#f`);
  });
});

describe("what a page says an npm script runs", () => {
  it("is the script as package.json has it (the repository's, or the nearest one to the page)", () => {
    const scriptsOf = (dir: string) =>
      (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts ?? {};
    const said = DOC_PAGES.flatMap((page) =>
      [...readFileSync(page, "utf8").matchAll(/`npm (start|test|run ([\w:-]+))`(?: \([^)]*\))? runs\s+`([^`]+)`/g)].map(([, npm = "", run, text = ""]) => {
        let dir = path.dirname(page);
        while (!existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir);
        const script = run ?? npm;
        return { page: path.relative(ROOT, page), script, text, runs: [scriptsOf(dir)[script], scriptsOf(ROOT)[script]] };
      }),
    );
    expect(said.length).toBeGreaterThan(0);
    for (const { page, script, text, runs } of said) expect(runs, `${page}: npm ${script} runs \`${text}\``).toContain(text);
  });
});
