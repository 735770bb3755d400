/**
 * What no text shown to a person may hold raw: C0 controls (TAB and LF aside), DEL, C1 controls,
 * the Arabic letter mark, the zero-width and directional marks, the bidi embeddings, overrides
 * and isolates, the BOM.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
export const UNPRINTED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
