/**
 * Path patterns below an instance, read as the sets of paths they match: whether two overlap,
 * whether one covers the other, whether one matches a path. An action's path (`/users/:user`)
 * and a manifest's operation (`/users/{user}`, `/files/{rest...}`) both parse into these segments,
 * so the library and the local platform judge overlaps by one rule.
 */

/** A literal segment, one segment of any text, or every remaining segment (at least one). */
export type PatternSegment = { literal: string } | "one" | "rest";

/** True when some path matches both patterns. */
export function overlap(a: readonly PatternSegment[], b: readonly PatternSegment[]): boolean {
  if (a.length === 0 || b.length === 0) return a.length === b.length;
  const [x, y] = [a[0]!, b[0]!];
  if (x === "rest" || y === "rest") return true;
  if (x !== "one" && y !== "one" && x.literal !== y.literal) return false;
  return overlap(a.slice(1), b.slice(1));
}

/** True when every path `specific` matches, `general` matches too. */
export function covers(general: readonly PatternSegment[], specific: readonly PatternSegment[]): boolean {
  if (general.length === 0 || specific.length === 0) return general.length === specific.length;
  const [g, s] = [general[0]!, specific[0]!];
  if (g === "rest") return true;
  if (s === "rest") return false;
  if (g !== "one" && (s === "one" || s.literal !== g.literal)) return false;
  return covers(general.slice(1), specific.slice(1));
}

/** True when the pattern matches the path's segments. */
export function matches(pattern: readonly PatternSegment[], path: readonly string[]): boolean {
  if (pattern.length === 0 || path.length === 0) return pattern.length === path.length;
  const [head, part] = [pattern[0]!, path[0]!];
  if (head === "rest") return true;
  if (head !== "one" && head.literal !== part) return false;
  return matches(pattern.slice(1), path.slice(1));
}
