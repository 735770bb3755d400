/**
 * The one rule every package shows a provider's text by (`printable` in `provider-kit/contract`):
 * what would act on a terminal or hide itself comes out as its escape, nothing else changes.
 */
import { describe, expect, it } from "vitest";
import { printable, STATUS_TEXT_MAX_LENGTH } from "provider-kit/contract";

describe("printable", () => {
  it.each([
    ["ESC (a CSI sequence)", "\u001b[2J", "\\u001b[2J"],
    ["BEL", "\u0007", "\\u0007"],
    ["CR (overwrites the line)", "a\rb", "a\\u000db"],
    ["DEL", "\u007f", "\\u007f"],
    ["the C1 CSI", "\u009b31m", "\\u009b31m"],
    ["the right-to-left override and its pop", "\u202eevil\u202c", "\\u202eevil\\u202c"],
    ["the isolates and marks", "\u2066\u2069\u200e\u200f\u061c", "\\u2066\\u2069\\u200e\\u200f\\u061c"],
    ["the zero-width space, joiners and BOM", "a\u200bb\u200cc\u200dd\ufeff", "a\\u200bb\\u200cc\\u200dd\\ufeff"],
    ["the line and paragraph separators", "a\u2028b\u2029", "a\\u2028b\\u2029"],
    ["an invisible tag beyond the BMP", "\u{e0041}", "\\u{e0041}"],
    ["a lone surrogate", "\ud800", "\\ud800"],
  ])("escapes %s", (_what, text, shown) => {
    expect(printable(text)).toBe(shown);
  });

  it("keeps letters of every script, emoji and the escapes it wrote (it can run twice)", () => {
    const text = "héllo wörld — ünïcode ✓ 😀 日本語 עברית";
    expect(printable(text)).toBe(text);
    expect(printable(printable("\u001b\u202e"))).toBe("\\u001b\\u202e");
  });

  it("escapes TAB and LF on one terminal line, keeps them as lines, or joins every whitespace run into one space", () => {
    expect(printable("a\tb\nc")).toBe("a\\u0009b\\u000ac");
    expect(printable("a\tb\nc\r", { lines: true })).toBe("a\tb\nc\\u000d");
    expect(printable("  a \t\r\n b  ", { oneLine: true })).toBe("a b");
  });

  it("cuts at maxLength between characters, never inside an escape nor a surrogate pair", () => {
    expect(printable("x".repeat(300), { maxLength: STATUS_TEXT_MAX_LENGTH })).toHaveLength(200);
    expect(printable(`${"x".repeat(197)}\u001b`, { maxLength: 200 })).toBe("x".repeat(197));
    expect(printable(`${"x".repeat(199)}😀`, { maxLength: 200 })).toBe("x".repeat(199));
  });
});
