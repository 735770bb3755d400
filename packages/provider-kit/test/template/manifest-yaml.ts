/**
 * Reads a service manifest as YAML, for the tests. It understands the block-mapping subset a
 * manifest uses (two levels, plain or double-quoted scalars, comments) and throws on anything
 * else, so output that a YAML parser would read differently fails the tests.
 */
export type YamlMapping = { [key: string]: string | YamlMapping };

const LINE = /^( *)([a-z][a-z0-9_-]*):(?: (.+))?$/;

function scalar(text: string): string {
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(text)) return text;
  throw new Error(`Not a plain or double-quoted YAML scalar: ${text}`);
}

export function readManifestYaml(text: string): YamlMapping {
  const root: YamlMapping = {};
  let nested: YamlMapping | undefined;
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`Not a YAML mapping line: ${JSON.stringify(line)}`);
    const [, indent = "", key = "", value] = match;
    if (indent === "") {
      nested = value === undefined ? {} : undefined;
      root[key] = nested ?? scalar(value as string);
    } else if (indent === "  " && nested !== undefined && value !== undefined) {
      nested[key] = scalar(value);
    } else {
      throw new Error(`Unexpected indentation or empty value: ${JSON.stringify(line)}`);
    }
  }
  return root;
}
