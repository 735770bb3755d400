/**
 * The one redaction the kit's reports and the local platform share (`provider-kit/contract`):
 * every form in which an answer may repeat a password goes, in text and in bytes.
 */
import { describe, expect, it } from "vitest";
import { disclosedSecret, redactSecretBytes, redactSecrets, secretForms, tokenForms } from "provider-kit/contract";

const USER = "svc";
const PASSWORD = "pa/ss+word? 100% é\"'<";

const encoded: Record<string, string> = {
  raw: PASSWORD,
  encodeURIComponent: encodeURIComponent(PASSWORD),
  "encodeURIComponent, lower-case hex": encodeURIComponent(PASSWORD).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
  encodeURI: encodeURI(PASSWORD),
  "a form's + for space": new URLSearchParams({ p: PASSWORD }).toString().slice(2),
  "a URL's user info": new URL(`http://u:${encodeURIComponent(PASSWORD)}@host`).password,
  "Basic token": Buffer.from(`${USER}:${PASSWORD}`).toString("base64"),
  "Basic token, padding URL-encoded": Buffer.from(`${USER}:${PASSWORD}`).toString("base64").replaceAll("=", "%3D"),
  base64: Buffer.from(PASSWORD).toString("base64"),
  base64url: Buffer.from(PASSWORD).toString("base64url"),
  JSON: JSON.stringify(PASSWORD).slice(1, -1),
  "JSON, slashes escaped": JSON.stringify(PASSWORD).slice(1, -1).replaceAll("/", "\\/"),
  "JSON, ASCII only": JSON.stringify(PASSWORD).slice(1, -1).replace("é", "\\u00e9"),
  "HTML (Python)": PASSWORD.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll('"', "&quot;").replaceAll("'", "&#x27;"),
  "HTML (Go)": PASSWORD.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll('"', "&#34;").replaceAll("'", "&#39;"),
};

describe("secretForms and redactSecrets", () => {
  it.each(Object.entries(encoded))("redact the password written as %s, in text and in bytes", (_name, form) => {
    const forms = secretForms(USER, PASSWORD);
    const text = `before ${form} after`;
    expect(redactSecrets(text, forms)).toMatch(/^before <redacted: [^>]+>(%3D|=)* after$/);
    expect(redactSecretBytes(Buffer.from(text), forms).toString()).toBe(redactSecrets(text, forms));
    expect(disclosedSecret(text, forms)).toBeDefined();
  });

  it("leave text without a form as it is, and bytes the same buffer", () => {
    const bytes = Buffer.from([0xff, 0x00, 0x01]);
    expect(redactSecretBytes(bytes, secretForms(USER, PASSWORD))).toBe(bytes);
    expect(redactSecrets("nothing here", secretForms(USER, PASSWORD))).toBe("nothing here");
  });

  it("redact a short secret, but do not judge an answer holding it a disclosure: it turns up by chance", () => {
    const forms = tokenForms("the token", "abcd");
    expect(redactSecrets("x abcd y", forms)).toBe("x <redacted: the token> y");
    expect(disclosedSecret("x abcd y", forms)).toBeUndefined();
  });
});
