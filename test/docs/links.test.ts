/**
 * The docs link to each other, to sections and to source files: every such link must lead
 * somewhere, so moving a section or a file cannot leave a reader at a dead end.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DOC_PAGES, ROOT } from "./markdown-files.js";

/** The text outside code blocks, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading = ""] of prose(readFileSync(file, "utf8")).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

describe("links in the docs", () => {
  it.each(DOC_PAGES.map((file) => [path.relative(ROOT, file), file]))("%s: every relative link and anchor resolves", (_name, file) => {
    const broken: string[] = [];
    for (const [, target = ""] of prose(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
      const [filePart, anchor] = target.split("#") as [string, string | undefined];
      const linked = filePart === "" ? file : path.resolve(path.dirname(file), filePart);
      if (!existsSync(linked)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && linked.endsWith(".md") && !anchorsOf(linked).has(anchor)) {
        broken.push(`${target}: no heading with that anchor`);
      }
    }
    expect(broken, "fix these links, or the headings they point to").toEqual([]);
  });
});
