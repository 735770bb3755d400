/** Creates the instance the calls use, on a server with a registry, and waits until it is ready. */
import { CALLS, INSTANCE } from "../calls.js";

const READY_TIMEOUT_MS = 30_000;

const statusOf = (baseUrl: string) => fetch(`${baseUrl}${CALLS.status.path}`, { headers: { ...CALLS.status.headers } });

export async function createInstance(baseUrl: string, fields: Record<string, string> = {}): Promise<void> {
  // A server started again on a registry that kept the instance (bench/scale.ts restarts them) uses it as it is.
  const existing = await statusOf(baseUrl);
  await existing.arrayBuffer();
  if (existing.status === 204) return;
  const response = await fetch(`${baseUrl}/resources`, {
    method: "POST",
    headers: { ...CALLS.status.headers },
    body: new URLSearchParams({ name: INSTANCE, team: "bench-team", user: "admin@example.com", ...fields }).toString(),
  });
  if (response.status !== 201) throw new Error(`Creating ${INSTANCE} answered ${response.status}: ${await response.text()}`);
  // Provisioning may go on in the background: status answers 202 until it is done.
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const status = await statusOf(baseUrl);
    const text = await status.text();
    if (status.status === 204) return;
    if (status.status !== 202 || Date.now() > deadline) throw new Error(`${INSTANCE} is not ready: status ${status.status} ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
