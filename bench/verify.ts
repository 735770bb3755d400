/**
 * Check a server's answer to a call before (and after) measuring it: a benchmark of a wrong
 * answer is worthless.
 */
import type { Call } from "./calls.js";

/** Send the call once; resolve when the answer is the expected one, throw saying what differs. */
export async function verifyAnswer(serverId: string, baseUrl: string, call: Call): Promise<void> {
  const response = await fetch(baseUrl + call.path, { method: call.method, headers: call.headers, body: call.body });
  const body = await response.text();
  const contentType = response.headers.get("content-type") ?? "";
  const problems: string[] = [];
  if (response.status !== call.expected.status) problems.push(`status ${response.status}, expected ${call.expected.status}`);
  if (body !== call.expected.body) problems.push(`body ${JSON.stringify(body)}, expected ${JSON.stringify(call.expected.body)}`);
  if (call.expected.contentType && !contentType.startsWith(call.expected.contentType)) {
    problems.push(`content-type "${contentType}", expected ${call.expected.contentType}`);
  }
  if (problems.length > 0) {
    throw new Error(`Server "${serverId}" answers ${call.name} wrongly: ${problems.join("; ")}. Fix the server before benchmarking it.`);
  }
}
