/**
 * Text a provider wrote, made fit to show a person. Its status and progress messages, its error
 * bodies and whatever the conformance kit quotes reach terminals (`tsuru service-instance-status`,
 * `provider-kit check`) and API answers, where a control character would act instead of being
 * read: ESC repaints or clears the screen, BEL rings, U+009B is ESC [ on an 8-bit terminal,
 * U+202E turns the rest of the line around, and an invisible character makes two texts look
 * alike. Each of them is shown as its JavaScript escape (`\u001b`), so the reader still sees
 * that something was there, and what.
 */

/** A status or progress text is one line of a status answer: longer ones are cut. */
export const STATUS_TEXT_MAX_LENGTH = 200;

/**
 * The characters never shown as they are: controls (C0, DEL, C1: `Cc`), format characters (`Cf`:
 * the bidi embeddings, overrides, isolates and marks, the Arabic letter mark, the zero-width
 * space and joiners, the word joiner, the BOM, the invisible tags), the line and paragraph
 * separators, lone surrogates and noncharacters.
 */
const UNPRINTABLE = /^[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Noncharacter_Code_Point}]$/u;

export interface PrintableOptions {
  /** TAB and LF stay (text shown as lines, a report's evidence). Default false: they are escaped too, as on a terminal's one line. */
  lines?: boolean;
  /** Runs of whitespace (LF, CR, TAB included) become one space, and the ends are trimmed (a status line). Default false. */
  oneLine?: boolean;
  /** The longest the text may come out (UTF-16 units, as `length`), cut between characters, never inside an escape. Default: no limit. */
  maxLength?: number;
}

/** `text` with every character that would act on a terminal or hide itself replaced by its escape. */
export function printable(text: string, { lines = false, oneLine = false, maxLength = Infinity }: PrintableOptions = {}): string {
  const source = oneLine ? text.replace(/[\t\n\v\f\r ]+/g, " ").trim() : text;
  let shown = "";
  // By code point: a lone surrogate comes alone, a pair stays whole.
  for (const char of source) {
    const piece = (lines && (char === "\t" || char === "\n")) || !UNPRINTABLE.test(char) ? char : escaped(char);
    if (shown.length + piece.length > maxLength) break;
    shown += piece;
  }
  return shown;
}

/** `\u001b`; `\u{e0041}` beyond the BMP. */
function escaped(char: string): string {
  const code = char.codePointAt(0)!;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
}
