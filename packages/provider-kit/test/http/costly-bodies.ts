/**
 * The bodies of at most 1 MiB that cost a provider the most to read: each was slow before the
 * form field limit (body-parser merges repeated keys in time that grows with the square of
 * their number) or deep before the parameter depth limit. Sent by the bodies test while the
 * health check must keep answering, and timed by `npx tsx bench/costly-bodies.ts`.
 */
import { FORM } from "../../../../test/support/fake-provider.js";

const MIB = 1024 * 1024;
const JSON_TYPE = "application/json";

/** `unit` repeated to fill the 1 MiB limit, leaving room for the rest of the body. */
const fill = (unit: string) => unit.repeat(Math.floor((MIB - 100) / unit.length));

export interface CostlyBody {
  label: string;
  body: string;
  type: string;
  /** What POST /resources answers with the default options. */
  status: number;
}

export const COSTLY_BODIES: readonly CostlyBody[] = [
  { label: "1 MiB of bare &", body: fill("&"), type: FORM, status: 413 },
  { label: "1 MiB of repeated tags=x", body: fill("tags=x&"), type: FORM, status: 413 },
  { label: "1 MiB of one-letter keys", body: fill("a&"), type: FORM, status: 413 },
  {
    label: "998 repeated tags of 1000 bytes",
    body: `name=db1&${Array.from({ length: 998 }, () => `tags=${"x".repeat(1000)}`).join("&")}`,
    type: FORM,
    status: 201,
  },
  { label: "parameters.a.a.a… 1 MiB deep (form)", body: `name=db2&parameters.${fill("a.")}a=1`, type: FORM, status: 400 },
  { label: "1 MiB of percent-encoding", body: `name=db3&description=${fill("%41")}`, type: FORM, status: 201 },
  {
    label: "parameters 100 000 levels deep (JSON)",
    body: `{"name":"db4","parameters":${'{"a":'.repeat(100_000)}"1"${"}".repeat(100_000)}}`,
    type: JSON_TYPE,
    status: 400,
  },
  {
    label: "100 000 tags (JSON)",
    body: `{"name":"db5","tags":[${Array.from({ length: 100_000 }, () => '"t"').join(",")}]}`,
    type: JSON_TYPE,
    status: 201,
  },
];
