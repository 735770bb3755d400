/** A check catalog as a Markdown table (docs/conformance-checks.md is this output for the native one). */
import { CHECKS, catalogCitation } from "../checks.js";
import type { CheckDefinition } from "../types.js";

export function formatCheckTable(catalog: readonly CheckDefinition[] = CHECKS): string {
  const rows = catalog.map((check) =>
    [
      `\`${check.id}\``,
      level(check),
      check.variants.join(", "),
      check.title,
      catalogCitation(check.cite),
      `${check.advice} (${check.cite.section})`,
      (check.dependsOn ?? []).map((id) => `\`${id}\``).join(", "),
      followsFrom(check),
    ]
      .map((cell) => cell.replace(/\|/g, "\\|"))
      .join(" | "),
  );
  return [
    "| id | level | variants | what must hold | rule | what to change when it does not (the contract's section) | skipped unless these pass | reported as following from (on the same answers, or any earlier failure of its family) |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((row) => `| ${row} |`),
    "",
  ].join("\n");
}

function followsFrom(check: CheckDefinition): string {
  const sameAnswers = check.followsFrom === "any" ? ["any check"] : (check.followsFrom ?? []).map((id) => `\`${id}\``);
  const shared = check.followsSharedAnswer ? ["any check listing one of its answers"] : [];
  return [...sameAnswers, ...shared, ...(check.family ? [`family \`${check.family}\``] : [])].join(", ");
}

function level(check: CheckDefinition): string {
  if (typeof check.level === "string") return check.level;
  return Object.entries(check.level)
    .map(([variant, level]) => `${level} (${variant})`)
    .join(", ");
}
