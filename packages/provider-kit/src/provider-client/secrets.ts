/**
 * The forms in which a secret a call sent could come back in an answer, and their redaction: one
 * implementation for the conformance kit (its reports, its `transport.no-secret` check) and the
 * local platform (its proxy's answers, its messages, its timeline). A provider may echo the
 * password as sent, JSON- or HTML-escaped (a debug page's frame locals), URL-encoded (a
 * connection string, a form it read back), or in base64 (the Basic token it got, with or
 * without its padding): each of these is a form.
 */

/** Shorter forms are not searched for: they turn up in any text by chance. */
const MIN_SECRET_LENGTH = 4;
/** Shorter forms are redacted, but an answer holding one is not judged a disclosure (`disclosedSecret`): too likely by chance. */
const MIN_DISCLOSED_LENGTH = 6;

export interface SecretForm {
  /** What it is, for a message: "the password", "the Basic credentials (base64)"... */
  what: string;
  text: string;
}

/** The token of `Authorization: Basic <token>`, as Go's SetBasicAuth writes it. */
export function basicToken(username: string, password: string): string {
  return Buffer.from(`${username}:${password}`, "utf8").toString("base64");
}

/** Every form of `password`, and of the Basic token it makes with `username`, worth searching for; longest first. */
export function secretForms(username: string, password: string): SecretForm[] {
  return distinct([...base64Forms("the Basic credentials (base64)", `${username}:${password}`), ...tokenForms("the password", password)]);
}

/**
 * Every form of one secret (a password, a bearer token, a kube config) worth searching for: as
 * it is, escaped as JSON (`\/` and `\u00e9` included) and HTML (Python's and Go's), percent-encoded
 * (JavaScript's encodeURIComponent and encodeURI, a URL's user info, a form's `+` for space; hex
 * digits in either case), and in base64 and base64url; longest first.
 */
export function tokenForms(what: string, secret: string): SecretForm[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const forms: SecretForm[] = [
    { what, text: secret },
    ...[json, json.replaceAll("/", "\\/"), asciiJson(json)].map((text) => ({ what: `${what} (JSON-escaped)`, text })),
    ...[pythonHtml(secret), goHtml(secret)].map((text) => ({ what: `${what} (HTML-escaped)`, text })),
    ...percentForms(secret).map((text) => ({ what: `${what} (URL-encoded)`, text })),
    ...base64Forms(`${what} (base64)`, secret),
    { what: `${what} (base64url)`, text: Buffer.from(secret, "utf8").toString("base64url") },
  ];
  return distinct(forms);
}

/** The first form `text` holds, if any (forms too short to be told from chance aside). */
export function disclosedSecret(text: string, forms: readonly SecretForm[]): SecretForm | undefined {
  return forms.find((form) => form.text.length >= MIN_DISCLOSED_LENGTH && text.includes(form.text));
}

/** `text` with every form replaced by `<redacted: what>`. */
export function redactSecrets(text: string, forms: readonly SecretForm[]): string {
  return forms.reduce((redacted, form) => redacted.replaceAll(form.text, marker(form)), text);
}

/** The same for bytes (an answer passed on as it came): the same buffer when no form is in it, so a binary answer stays as it was. */
export function redactSecretBytes(bytes: Buffer, forms: readonly SecretForm[]): Buffer {
  let clean = bytes;
  for (const form of forms) {
    const needle = Buffer.from(form.text);
    if (clean.indexOf(needle) === -1) continue;
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = clean.indexOf(needle); at !== -1; at = clean.indexOf(needle, from)) {
      parts.push(clean.subarray(from, at), Buffer.from(marker(form)));
      from = at + needle.length;
    }
    parts.push(clean.subarray(from));
    clean = Buffer.concat(parts);
  }
  return clean;
}

/** `url` as reports and messages show it: without the credentials it may carry (`http://user:pass@host`), nor a final slash. */
export function urlWithoutCredentials(url: string): string {
  if (!URL.canParse(url)) return url.replace(/\/+$/, "");
  const shown = new URL(url);
  shown.username = "";
  shown.password = "";
  return shown.toString().replace(/\/+$/, "");
}

function marker(form: SecretForm): string {
  return `<redacted: ${form.what}>`;
}

/** Long enough to search for, each text once (its first name kept), longest first: a form inside another must not break the longer one's match. */
function distinct(forms: readonly SecretForm[]): SecretForm[] {
  const kept = forms.filter((form, index) => form.text.length >= MIN_SECRET_LENGTH && forms.findIndex((other) => other.text === form.text) === index);
  return kept.sort((a, b) => b.text.length - a.text.length);
}

/**
 * Base64 with its padding, without it (a prefix of every padded form, so the secret goes
 * whatever follows), and with the padding escaped as a page or a URL writes it.
 */
function base64Forms(what: string, secret: string): SecretForm[] {
  const encoded = Buffer.from(secret, "utf8").toString("base64");
  const bare = encoded.replace(/=+$/, "");
  const padding = encoded.length - bare.length;
  const escapes = padding > 0 ? ["&#61;", "&#x3d;", "&#x3D;", "%3D", "%3d"].map((escape) => bare + escape.repeat(padding)) : [];
  return [...escapes, encoded, bare].map((text) => ({ what, text }));
}

/** Percent-encodings of `secret`, each with upper- and lower-case hex digits. */
function percentForms(secret: string): string[] {
  const userInfo = new URL("http://host");
  userInfo.password = secret;
  const form = new URLSearchParams({ s: secret }).toString().slice(2);
  const encodings = [encodeURIComponent(secret), encodeURI(secret), userInfo.password, form, form.replaceAll("+", "%20")];
  return encodings.flatMap((text) => [text, text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())]);
}

/** JSON as encoders that write ASCII only (Python's json.dumps) escape the rest: `\u00e9`. */
function asciiJson(json: string): string {
  return json.replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Escaped as Python's html.escape and Django's templates write it. */
function pythonHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#x27;");
}

/** Escaped as Go's html.EscapeString and html/template write it. */
function goHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&#34;").replaceAll("'", "&#39;");
}
