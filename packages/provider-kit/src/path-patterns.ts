/**
 * Path patterns below an instance, read as the sets of paths they match: whether two overlap,
 * whether one covers the other, whether one matches a path. An action's path (`/users/:user`)
 * and a manifest's operation (`/users/{user}`, `/files/{rest...}`) both parse into these segments,
 * so the library and the local platform judge overlaps by one rule.
 */

/** A literal segment, one segment of any text, or every remaining segment (at least one). */
export type PatternSegment = { literal: string } | "one" | "rest";

// Each walks the two lists once, by index (no copies): a manifest compares every pair of its operations.

/** True when some path matches both patterns. */
export function overlap(a: readonly PatternSegment[], b: readonly PatternSegment[]): boolean {
  for (let index = 0; ; index++) {
    if (index === a.length || index === b.length) return a.length === b.length;
    const [x, y] = [a[index]!, b[index]!];
    if (x === "rest" || y === "rest") return true;
    if (x !== "one" && y !== "one" && x.literal !== y.literal) return false;
  }
}

/** True when every path `specific` matches, `general` matches too. */
export function covers(general: readonly PatternSegment[], specific: readonly PatternSegment[]): boolean {
  for (let index = 0; ; index++) {
    if (index === general.length || index === specific.length) return general.length === specific.length;
    const [g, s] = [general[index]!, specific[index]!];
    if (g === "rest") return true;
    if (s === "rest") return false;
    if (g !== "one" && (s === "one" || s.literal !== g.literal)) return false;
  }
}

/** True when the pattern matches the path's segments. */
export function matches(pattern: readonly PatternSegment[], path: readonly string[]): boolean {
  for (let index = 0; ; index++) {
    if (index === pattern.length || index === path.length) return pattern.length === path.length;
    const [head, part] = [pattern[index]!, path[index]!];
    if (head === "rest") return true;
    if (head !== "one" && head.literal !== part) return false;
  }
}
