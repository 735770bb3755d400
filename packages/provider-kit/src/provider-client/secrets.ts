/**
 * The forms in which the credentials a call sent could come back in an answer: the password as
 * sent, JSON-escaped or HTML-escaped (a debug page's frame locals), in base64, and the Basic
 * token itself. The client redacts them from what it records; the conformance kit fails an
 * answer that holds one (a real provider's debug page showed its API password).
 */

/** Shorter forms are not searched for: they turn up in any text by chance. */
const MIN_SECRET_LENGTH = 6;

export interface SecretForm {
  /** What it is, for a message: "the password", "the Basic credentials (base64)"... */
  what: string;
  text: string;
}

/** The token of `Authorization: Basic <token>`, as Go's SetBasicAuth writes it. */
export function basicToken(username: string, password: string): string {
  return Buffer.from(`${username}:${password}`, "utf8").toString("base64");
}

/** Every form of `password` (and of the Basic token it makes with `username`) worth searching for, longest first. */
export function secretForms(username: string, password: string): SecretForm[] {
  const base64 = Buffer.from(password, "utf8").toString("base64");
  const forms: SecretForm[] = [
    { what: "the Basic credentials (base64)", text: basicToken(username, password).replace(/=+$/, "") },
    { what: "the password", text: password },
    { what: "the password (JSON-escaped)", text: JSON.stringify(password).slice(1, -1) },
    { what: "the password (HTML-escaped)", text: htmlEscaped(password) },
    { what: "the password (base64)", text: base64.replace(/=+$/, "") },
    { what: "the password (base64url)", text: Buffer.from(password, "utf8").toString("base64url") },
  ];
  const distinct = forms.filter((form, index) => form.text.length >= MIN_SECRET_LENGTH && forms.findIndex((other) => other.text === form.text) === index);
  return distinct.sort((a, b) => b.text.length - a.text.length);
}

/** The first form `text` holds, if any. */
export function disclosedSecret(text: string, forms: readonly SecretForm[]): SecretForm | undefined {
  return forms.find((form) => text.includes(form.text));
}

/** `text` with every form replaced by `<redacted: what>`. */
export function redactSecrets(text: string, forms: readonly SecretForm[]): string {
  return forms.reduce((redacted, form) => redacted.replaceAll(form.text, `<redacted: ${form.what}>`), text);
}

/** Escaped as Python's html.escape and Django's templates write it. */
function htmlEscaped(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#x27;");
}

/** `url` as reports and messages show it: without the credentials it may carry (`http://user:pass@host`), nor a final slash. */
export function urlWithoutCredentials(url: string): string {
  const shown = new URL(url);
  shown.username = "";
  shown.password = "";
  return shown.toString().replace(/\/$/, "");
}
