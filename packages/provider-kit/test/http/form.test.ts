/**
 * The one-pass form reader (src/http/form.ts) against body-parser's urlencoded reader with the
 * provider's options: the same request bytes, sent over real HTTP to both, give the same
 * `req.body` (values and key order) or the same failure (`status`, `type`), for a table of bodies
 * and for the ways a body goes wrong. The platform's own forms must be read by the one pass
 * itself, not handed to qs.
 */
import bodyParser from "body-parser";
import { once } from "node:events";
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formReader, parseForm, plainFields } from "../../src/http/form.js";
import { COSTLY_BODIES } from "./costly-bodies.js";
import { FORM } from "./helpers.js";

const LIMITS = { bytes: 4096, formFields: 20 };
/** The provider's defaults, for the costly bodies of 1 MiB. */
const DEFAULT_LIMITS = { bytes: 1024 * 1024, formFields: 1000 };
type Outcome = { body: unknown; keys: string[] } | { status: number | undefined; type: string | undefined };
type Reader = "form" | "body-parser";

/** Both readers with the provider's options; `x-limits: default` picks the default limits. */
function readersFor(limits: typeof LIMITS): Record<Reader, ReturnType<typeof formReader>> {
  return {
    form: formReader(limits),
    "body-parser": bodyParser.urlencoded({ extended: false, limit: limits.bytes, type: FORM, parameterLimit: limits.formFields }),
  };
}
const readers = { small: readersFor(LIMITS), default: readersFor(DEFAULT_LIMITS) };

/** Outcomes by request id (`x-id`), as each reader finished it; an aborted request gets no answer. */
const outcomes = new Map<string, Outcome>();
const arrived = new Map<string, () => void>();
/** Called when the server starts handling a request (`x-id`), before its reader has its body. */
const begun = new Map<string, () => void>();
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const id = String(req.headers["x-id"]);
    begun.get(id)?.();
    readers[req.headers["x-limits"] === "default" ? "default" : "small"][req.headers["x-reader"] as Reader](req, res, (error?: unknown) => {
      const body = (req as IncomingMessage & { body?: unknown }).body;
      const failure = error as { status?: number; type?: string } | undefined;
      outcomes.set(id, failure ? { status: failure.status, type: failure.type } : { body, keys: Object.keys(body ?? {}) });
      arrived.get(id)?.();
      res.writeHead(failure ? 400 : 200).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let sequence = 0;

/** Sends `body` (headers as given) to one reader and waits until that reader has finished with it. */
async function outcomeOf(reader: Reader, body: Buffer, headers: Record<string, string>): Promise<Outcome> {
  const id = String(++sequence);
  const done = new Promise<void>((resolve) => arrived.set(id, resolve));
  const req = request({ host: "127.0.0.1", port, method: "POST", path: "/", headers: { "x-id": id, "x-reader": reader, ...headers } });
  req.on("error", () => {}); // a refused body may be answered before it is all sent
  req.on("response", (res) => res.resume());
  req.end(body);
  await done;
  return outcomes.get(id)!;
}

async function bothOf(body: string | Buffer, headers: Record<string, string> = {}) {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  const withDefaults = { "content-type": FORM, "content-length": String(bytes.length), ...headers };
  if ("transfer-encoding" in headers) delete (withDefaults as Record<string, string>)["content-length"];
  return { form: await outcomeOf("form", bytes, withDefaults), bodyParser: await outcomeOf("body-parser", bytes, withDefaults) };
}

const PLATFORM_FORMS = [
  "app-name=web&app-host=web.example.com&app-hosts=web.example.com&app-hosts=web-2.example.com&user=ann%40example.com&eventid=65a1f0c2&parameters.x=1",
  "name=db1&plan=small&team=core&description=my+cache+%28prod%29&tags=a&tags=b&parameters.tls.enabled=true",
  "app-name=web&app-hosts=web.example.com&user=ann%40example.com&eventid=65a1f0c2e4b0a1b2c3d4e5f6",
  "unit-host=10.0.0.1",
];

const BODIES: ReadonlyArray<string | Buffer> = [
  ...PLATFORM_FORMS,
  "a=1&a=2&a=3&b=&c",
  "a+b=c+d&%20x%20=%2B%26%3D",
  "name=%E2%9C%93%F0%9F%98%80&d=caf%C3%A9",
  "bad=%E0%A4%A&worse=%zz&ok=%41&trunc=%",
  "key%=v&%41%42=%",
  "=nokey&&a=1&&=&b==2=3&",
  "a=1&",
  "&",
  "0=a&1=b&10=c&z=d&2=e",
  "parameters.a.b.c=1&parameters.a.b.d=2",
  "é=ü&ключ=значение",
  "a[b]=1&a[c]=2",
  "tags[]=a&tags[]=b",
  "a%5Bb%5D=1&x=2",
  "a=[1,2]&b=]",
  "__proto__=x&a=1",
  "constructor=x&a=1",
  "toString=1&hasOwnProperty=2&valueOf=3",
  "a=%5b",
  Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("bom=first")]),
  Buffer.concat([Buffer.from("a=1&"), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("b=2")]),
  Buffer.from([0x61, 0x3d, 0xff, 0xfe, 0x26, 0x62, 0x3d, 0xc3]),
  Array.from({ length: 20 }, (_, i) => `f${i}=${i}`).join("&"),
  Array.from({ length: 21 }, (_, i) => `f${i}=${i}`).join("&"),
  "&".repeat(25),
  "x".repeat(4000),
];

describe("the one-pass form reader", () => {
  it.each(BODIES.map((body, index) => [index, body] as const))("body %i: the same fields or failure as body-parser", async (_, body) => {
    const { form, bodyParser: expected } = await bothOf(body);
    expect(form).toEqual(expected);
  });

  it("reads the platform's forms itself, without qs", () => {
    for (const text of PLATFORM_FORMS) expect(plainFields(text), text).toBeDefined();
    for (const text of ["a[b]=1", "a%5Bb%5D=1", "__proto__=1", "toString=1"]) expect(plainFields(text), text).toBeUndefined();
  });

  it("fails as body-parser does: over the byte limit (413 before reading), more fields than the limit", async () => {
    const over = await bothOf("x".repeat(LIMITS.bytes + 1));
    expect(over.form).toEqual({ status: 413, type: "entity.too.large" });
    expect(over.form).toEqual(over.bodyParser);
    expect(parseForm("a&".repeat(LIMITS.formFields), LIMITS.formFields)).toEqual({ status: 413, type: "parameters.too.many" });
  });

  it("hands every other request to body-parser: chunked, another Content-Type spelling, a charset, Content-Encoding identity", async () => {
    const variants: Array<Record<string, string>> = [
      { "transfer-encoding": "chunked" },
      { "content-type": `${FORM}; charset=utf-8` },
      { "content-type": "Application/X-WWW-Form-Urlencoded" },
      { "content-type": `${FORM}; charset=iso-8859-1` },
      { "content-type": `${FORM}; charset=utf8` },
      { "content-encoding": "identity" },
    ];
    for (const headers of variants) {
      const { form, bodyParser: expected } = await bothOf("a=1&b=%C3%A9", headers);
      expect(form, JSON.stringify(headers)).toEqual(expected);
    }
  });

  it("a body cut short (the caller went away) fails as request.aborted, as with body-parser", async () => {
    for (const reader of ["form", "body-parser"] as const) {
      const id = String(++sequence);
      const done = new Promise<void>((resolve) => arrived.set(id, resolve));
      const reading = new Promise<void>((resolve) => begun.set(id, resolve));
      const socket = connect(port, "127.0.0.1");
      await once(socket, "connect");
      socket.write(
        `POST / HTTP/1.1\r\nHost: x\r\nx-id: ${id}\r\nx-reader: ${reader}\r\nContent-Type: ${FORM}\r\nContent-Length: 100\r\n\r\na=1&b=`,
      );
      await reading; // the reader is on it: the body is cut short under it, as when a caller goes away
      socket.destroy();
      await done;
      expect(outcomes.get(id), reader).toEqual({ status: 400, type: "request.aborted" });
    }
  });

  it("the costliest form bodies of 1 MiB give the same fields or failure, with the default limits", async () => {
    for (const { label, body } of COSTLY_BODIES.filter((costly) => costly.type === FORM)) {
      const { form, bodyParser: expected } = await bothOf(body, { "x-limits": "default" });
      expect(form, label).toEqual(expected);
    }
  });
});
