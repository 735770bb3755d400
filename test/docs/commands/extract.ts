/**
 * The commands a Markdown page shows: every line of its ```sh, ```bash, ```shell and ```console
 * blocks that a reader would type, with `\` continuations joined and comments dropped.
 *
 * In sh-style blocks, lines starting with `#` are comments; those right under a command (no
 * blank line between) are the output the page shows for it. In console blocks, commands follow
 * a `$ ` prompt and every other line is output.
 */

export interface DocCommand {
  /** The page, relative to the repository's root. */
  file: string;
  /** Where the command starts (1-based). */
  line: number;
  /** The heading it sits under ("" before the first). */
  section: string;
  /** As the reader types it: continuations joined with one space, the trailing comment left out. */
  text: string;
  /** The output the page shows for it, one entry per line, without the `# ` marker. */
  shown: string[];
}

interface Block {
  language: string;
  section: string;
  /** The block's lines, with their line numbers. */
  lines: { number: number; text: string }[];
}

const SHELL_LANGUAGES = new Set(["sh", "bash", "shell", "console"]);

function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let open: Block | undefined;
  let section = "";
  markdown.split("\n").forEach((text, index) => {
    const fence = /^\s*```\s*(\S*)/.exec(text);
    if (fence && open) {
      blocks.push(open);
      open = undefined;
    } else if (fence) {
      open = { language: fence[1] ?? "", section, lines: [] };
    } else if (open) {
      open.lines.push({ number: index + 1, text });
    } else {
      section = /^#{1,6} (.+)/.exec(text)?.[1]?.trim() ?? section;
    }
  });
  return blocks;
}

/** The line without its trailing comment: a `#` outside quotes, at the start or after a blank. */
export function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote === undefined && char === "\\") i++;
    else if (char === quote) quote = undefined;
    else if (quote === undefined && (char === "'" || char === '"')) quote = char;
    else if (quote === undefined && char === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/**
 * +1 for a line opening a compound command (for, while, until, if), -1 for one closing it; a
 * line doing both (`until x; do y; done`) leaves the depth as it was.
 */
function depthChange(line: string): number {
  const opens = /^(for|while|until|if)\b/.test(line) ? 1 : 0;
  const closes = /(^|;\s*)(done|fi)\b/.test(line) ? 1 : 0;
  return opens - closes;
}

/**
 * The command starting at `lines[start]`: its `\` continuations joined with a space, the lines
 * of a compound command (a for loop) kept on lines of their own. `prompt` is left off each
 * continuation line (console blocks' `> `).
 */
function commandAt(lines: Block["lines"], start: number, prompt: RegExp): { text: string; next: number } {
  let text = withoutComment(lines[start]!.text.trim());
  let depth = depthChange(text);
  let next = start + 1;
  while ((text.endsWith("\\") || depth > 0) && next < lines.length) {
    const line = withoutComment(lines[next]!.text.trim().replace(prompt, "").trim());
    text = text.endsWith("\\") ? `${text.slice(0, -1).trimEnd()} ${line}` : `${text}\n${line}`;
    depth += depthChange(line);
    next++;
  }
  return { text, next };
}

function shCommands(file: string, block: Block): DocCommand[] {
  const commands: DocCommand[] = [];
  let last: DocCommand | undefined;
  for (let i = 0; i < block.lines.length; ) {
    const line = block.lines[i]!.text.trim();
    if (line === "") {
      last = undefined;
      i++;
    } else if (line.startsWith("#")) {
      last?.shown.push(line.replace(/^# ?/, ""));
      i++;
    } else {
      const { text, next } = commandAt(block.lines, i, /^$/);
      last = { file, line: block.lines[i]!.number, section: block.section, text, shown: [] };
      commands.push(last);
      i = next;
    }
  }
  return commands;
}

function consoleCommands(file: string, block: Block): DocCommand[] {
  const commands: DocCommand[] = [];
  for (let i = 0; i < block.lines.length; ) {
    const line = block.lines[i]!.text;
    if (line.startsWith("$ ")) {
      const lines = [{ ...block.lines[i]!, text: line.slice(2) }, ...block.lines.slice(i + 1)];
      const { text, next } = commandAt(lines, 0, /^> /);
      commands.push({ file, line: block.lines[i]!.number, section: block.section, text, shown: [] });
      i += next;
    } else {
      if (line.trim() !== "") commands.at(-1)?.shown.push(line);
      i++;
    }
  }
  return commands;
}

/** Every command of the page's shell blocks, in order. `file` names the page in each result. */
export function commandsOf(file: string, markdown: string): DocCommand[] {
  return fencedBlocks(markdown)
    .filter((block) => SHELL_LANGUAGES.has(block.language))
    .flatMap((block) => (block.language === "console" ? consoleCommands(file, block) : shCommands(file, block)));
}
