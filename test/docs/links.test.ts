/**
 * The docs link to each other, to sections and to source files: every such link must lead
 * somewhere, so moving a section or a file cannot leave a reader at a dead end.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { linksOf } from "../support/markdown-links.js";
import { DOC_PAGES, ROOT } from "./markdown-files.js";

describe("links in the docs", () => {
  it.each(DOC_PAGES.map((file) => [path.relative(ROOT, file), file]))("%s: every relative link and anchor resolves", (_name, file) => {
    const broken = linksOf(file).flatMap(({ target, problem }) => (problem ? [`${target}: ${problem}`] : []));
    expect(broken, "fix these links, or the headings they point to").toEqual([]);
  });
});
