/**
 * Build step: copies the repository's docs/ pages (Markdown) into this package's docs/, so a
 * project that installs provider-kit has the guide, the reference and the contract at
 * node_modules/provider-kit/docs/ with every link between them working. A link to something the
 * package does not ship (a source file, the Redis example, a screenshot) becomes plain text
 * naming it in the repository: a reader without the checkout meets no dead link.
 */
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

const packageDir = path.resolve(import.meta.dirname, "..");
const repository = path.resolve(packageDir, "../..");
const source = path.join(repository, "docs");
const target = path.join(packageDir, "docs");

/** The Markdown pages under `dir`, relative to it. */
function pages(dir) {
  return readdirSync(dir, { recursive: true }).filter((file) => file.endsWith(".md") && statSync(path.join(dir, file)).isFile());
}

/** `[text](target)` (and `![alt](target)`) outside code blocks, for links that leave the shipped pages. */
function rewrite(markdown, page, shipped) {
  return markdown
    .split(/(^```[\s\S]*?^```)/m)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : part.replace(/!?\[([^\]]*)\]\(([^)\s]+)\)/g, (link, text, href) => {
            if (/^[a-z]+:/i.test(href) || href.startsWith("#")) return link;
            const [filePart, anchor] = href.split("#");
            const file = path.resolve(path.dirname(path.join(source, page)), filePart);
            if (shipped.has(file)) return link;
            // The package's own files (the template) are beside its docs/ once installed.
            if (file.startsWith(path.join(packageDir, "templates") + path.sep)) {
              const moved = path.relative(path.dirname(path.join(target, page)), file);
              return link.replace(href, anchor === undefined ? moved : `${moved}#${anchor}`);
            }
            const named = path.relative(repository, file);
            const said = text.replace(/`/g, "") === named ? text : `${text} (\`${named}\``;
            return said === text ? `${text} (in the provider-kit repository)` : `${said} in the provider-kit repository)`;
          }),
    )
    .join("");
}

const all = pages(source);
const shipped = new Set(all.map((page) => path.join(source, page)));
rmSync(target, { recursive: true, force: true });
for (const page of all) {
  mkdirSync(path.dirname(path.join(target, page)), { recursive: true });
  writeFileSync(path.join(target, page), rewrite(readFileSync(path.join(source, page), "utf8"), page, shipped));
}
// The licence the pages are under, beside them.
cpSync(path.join(packageDir, "LICENSE"), path.join(target, "LICENSE"));
