/** Colour follows FORCE_COLOR, then NO_COLOR, then the terminal. */
import { describe, expect, it } from "vitest";
import { colorOn } from "../../src/cli/color.js";

describe("colorOn", () => {
  const terminal = { isTTY: true, hasColors: () => true };
  const pipe = { isTTY: false };
  type Case = [string, Parameters<typeof colorOn>[0], NodeJS.ProcessEnv, boolean];
  it.each<Case>([
    ["a terminal", terminal, {}, true],
    ["a pipe", pipe, {}, false],
    ["a terminal with NO_COLOR=1", terminal, { NO_COLOR: "1" }, false],
    ["a terminal with NO_COLOR empty (unset, per no-color.org)", terminal, { NO_COLOR: "" }, true],
    ["a pipe with FORCE_COLOR=1", pipe, { FORCE_COLOR: "1" }, true],
    ["a pipe with FORCE_COLOR empty", pipe, { FORCE_COLOR: "" }, true],
    ["a terminal with FORCE_COLOR=0", terminal, { FORCE_COLOR: "0" }, false],
    ["FORCE_COLOR=1 and NO_COLOR=1 (FORCE_COLOR wins, as in Node)", pipe, { FORCE_COLOR: "1", NO_COLOR: "1" }, true],
    ["a dumb terminal", { isTTY: true, hasColors: () => false }, {}, false],
  ])("%s", (_, stream, env, expected) => {
    expect(colorOn(stream, env)).toBe(expected);
  });
});
