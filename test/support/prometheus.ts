/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: any line
 * that is not a well-formed comment or sample throws, and every sample must belong to a family
 * declared by `# TYPE` before it (histograms: `_bucket`, `_sum`, `_count`).
 */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name → its type (counter, gauge, histogram, summary, untyped). */
  types: Map<string, string>;
  samples: Sample[];
  /** The value of the one sample with this name and exactly these labels; undefined when absent. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = `([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (\\S+)(?: (-?\\d+))?$`);
const VALUE = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]Inf|NaN)$/;
const SUFFIXES: Record<string, string[]> = { histogram: ["_bucket", "_sum", "_count"], summary: ["", "_sum", "_count"] };

function unescape(value: string): string {
  return value.replace(/\\(["\\n])/g, (_, char: string) => (char === "n" ? "\n" : char));
}

function parseValue(text: string, line: string): number {
  if (!VALUE.test(text)) throw new Error(`Not a sample value: ${JSON.stringify(line)}`);
  return text.endsWith("Inf") ? (text.startsWith("-") ? -Infinity : Infinity) : Number(text);
}

export function parsePrometheusText(text: string): Exposition {
  if (text !== "" && !text.endsWith("\n")) throw new Error("The exposition must end with a newline.");
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n").slice(0, -1)) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const type = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
      if (type) {
        if (types.has(type[1]!)) throw new Error(`Family declared twice: ${type[1]}`);
        types.set(type[1]!, type[2]!);
      } else if (line.startsWith("# TYPE") || (line.startsWith("# HELP") && !new RegExp(`^# HELP ${NAME} `).test(line))) {
        throw new Error(`Malformed comment: ${JSON.stringify(line)}`);
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`Malformed sample line: ${JSON.stringify(line)}`);
    const name = match[1]!;
    const family = [...types.entries()].find(([base, type]) => (SUFFIXES[type] ?? [""]).some((suffix) => base + suffix === name));
    if (!family) throw new Error(`Sample ${name} has no # TYPE declared before it.`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(new RegExp(LABEL, "g"))) {
      if (key! in labels) throw new Error(`Label ${key} repeated in ${JSON.stringify(line)}`);
      labels[key!] = unescape(value!);
    }
    samples.push({ name, labels, value: parseValue(match[match.length - 2]!, line) });
  }
  const sameLabels = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([key, value]) => a[key] === value);
  return {
    types,
    samples,
    value(name, labels = {}) {
      return samples.find((sample) => sample.name === name && sameLabels(sample.labels, labels))?.value;
    },
  };
}
