/**
 * Following the links of Markdown pages as a reader does: relative links and `#anchors` must
 * lead somewhere. Used by the repository's doc tests and by the test of a project made by
 * `provider-kit init`, which follows its links into the docs its installed packages ship.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

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

export interface FollowedLink {
  /** The link as written. */
  target: string;
  /** The file it leads to, absolute. */
  file: string;
  /** What is wrong with it; undefined when it opens. */
  problem?: string;
}

/** Every relative link of the Markdown page `file` (http:, https:, mailto: left out), judged. */
export function linksOf(file: string): FollowedLink[] {
  return [...prose(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target = ""]) => target)
    .filter((target) => !/^[a-z]+:/i.test(target))
    .map((target) => {
      const [filePart, anchor] = target.split("#") as [string, string | undefined];
      const linked = filePart === "" ? file : path.resolve(path.dirname(file), decodeURI(filePart));
      if (!existsSync(linked)) return { target, file: linked, problem: "no such file" };
      if (anchor !== undefined && linked.endsWith(".md") && !anchorsOf(linked).has(anchor)) {
        return { target, file: linked, problem: "no heading with that anchor" };
      }
      return { target, file: linked };
    });
}

/**
 * The dead links of `pages` and of every Markdown page they lead to, transitively, as
 * "<page>: <link>: <problem>" with pages relative to `root`.
 */
export function deadLinksFrom(pages: readonly string[], root: string): string[] {
  const dead: string[] = [];
  const seen = new Set<string>();
  const queue = [...pages];
  for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
    if (seen.has(page)) continue;
    seen.add(page);
    for (const link of linksOf(page)) {
      if (link.problem) dead.push(`${path.relative(root, page)}: ${link.target}: ${link.problem}`);
      else if (link.file.endsWith(".md")) queue.push(link.file);
    }
  }
  return dead;
}
