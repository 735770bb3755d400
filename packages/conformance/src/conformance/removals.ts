/**
 * The native run's side of the ledger: each call that makes something (a create, a bind)
 * records the call that undoes it; that call, sent by the run and answered 2xx or 404 (already
 * gone), takes it off. What is left is undone at the end, the newest first.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Call, CallResult, PlatformClient } from "provider-kit/contract";
import type { AppNames, PlatformCalls, RunNames } from "./calls.js";
import type { Ledger } from "./ledger.js";
import type { Leftover, ProgressEvent } from "./types.js";

/** What a call makes, and the call that undoes it. */
export interface Made {
  what: Pick<Leftover, "instance" | "binding">;
  undo: Call;
}

/** What the run's create and bind calls make, by name. */
export function madeBy(calls: PlatformCalls, names: RunNames) {
  return {
    instance: (instance: string): Made => ({ what: { instance }, undo: calls.destroy(instance) }),
    app: (instance: string, app: AppNames = names.app): Made => ({ what: { instance, binding: `app ${app.name}` }, undo: calls.unbindApp(instance, app) }),
    unit: (instance: string): Made => ({ what: { instance, binding: `unit ${names.unitHost}` }, undo: calls.unbindUnit(instance) }),
    job: (instance: string): Made => ({ what: { instance, binding: `job ${names.job}` }, undo: calls.unbindJob(instance) }),
  };
}

export class Removals {
  constructor(
    private readonly client: PlatformClient,
    private readonly ledger: Ledger,
    /** Delays before each retry of a destroy; an unbind is tried once. */
    private readonly retryDelaysMs: readonly number[],
    private readonly onProgress: ((event: ProgressEvent) => void) | undefined,
  ) {}

  /** Called with every answer of the run: a call that made something (2xx, or no answer: a timed-out create may succeed) is recorded; its undo, answered, takes it off. */
  sent(call: Call, result: CallResult, made?: Made): void {
    const status = result.answer?.status;
    if (made && (status === undefined || isSuccess(status))) {
      this.ledger.add(keyOf(made.undo), { what: made.what, call: callText(made.undo), remove: () => this.undo(made) });
    } else if (status !== undefined && removed(status)) {
      this.ledger.delete(keyOf(call));
    }
  }

  /**
   * Before the run destroys `instance`: its bindings the run has not undone, undone the newest
   * first, as the platform unbinds every app before it removes an instance.
   */
  async unbindAll(instance: string): Promise<void> {
    await this.ledger.removeAll((what) => what.instance === instance && what.binding !== undefined);
  }

  /** True while what `made` made is still to be removed. */
  pending(made: Made): boolean {
    return this.ledger.has(keyOf(made.undo));
  }

  private async undo({ what, undo }: Made): Promise<string | undefined> {
    if (what.binding !== undefined) {
      // Not tied to the run's signal: an interrupted run must still clean up.
      const result = await this.client.send(undo);
      return result.answer && removed(result.answer.status) ? undefined : answerSummary(result);
    }
    return this.destroy(what.instance, undo);
  }

  /** A destroy, retried on the schedule: 2xx or 404 (already gone) means removed. */
  private async destroy(instance: string, call: Call): Promise<string | undefined> {
    let last: CallResult | undefined;
    const delays = [0, ...this.retryDelaysMs];
    for (const [index, delay] of delays.entries()) {
      if (last) {
        this.onProgress?.({ type: "retrying", instance, delayMs: delay, reason: answerSummary(last) });
        if (delay > 0) await sleep(delay);
      }
      this.onProgress?.({ type: "destroying", instance, attempt: { number: index + 1, of: delays.length } });
      last = await this.client.send(call);
      if (last.answer && removed(last.answer.status)) {
        this.onProgress?.({ type: "cleanup", instance, removed: true });
        return undefined;
      }
    }
    const reason = last ? answerSummary(last) : "not sent";
    this.onProgress?.({ type: "cleanup", instance, removed: false, reason });
    return reason;
  }
}

const isSuccess = (status: number) => status >= 200 && status < 300;
const removed = (status: number) => isSuccess(status) || status === 404;

/** One key per thing: its undo call, as sent (method, path and what the body names). */
function keyOf(call: Call): string {
  return `${call.method} ${call.path} ${JSON.stringify(call.payload ?? null)}`;
}

/** `DELETE /resources/x/bind-app (app-name=x-app, app-host=x-app.example.com)`: the call, and the fields that name what it removes. */
function callText(call: Call): string {
  const fields = call.payload?.fields ?? {};
  const hosts = fields["app-hosts"];
  const named = {
    "app-name": fields["app-name"],
    "app-host": call.payload?.formOnlyFields?.["app-host"] ?? (Array.isArray(hosts) ? hosts[0] : hosts),
    "unit-host": fields["unit-host"],
  };
  const shown = Object.entries(named).filter(([, value]) => typeof value === "string").map(([name, value]) => `${name}=${String(value)}`);
  return `${call.method} ${call.path}${shown.length > 0 ? ` (${shown.join(", ")})` : ""}`;
}

/** `DELETE /resources/x answered 500: its disk is busy`, from the recorded (trimmed) exchange. */
function answerSummary(result: CallResult): string {
  const { method, path, response, error } = result.exchange;
  if (!response) return `${method} ${path} got no answer: ${error ?? "unknown error"}`;
  const body = response.body.replace(/\s+/g, " ").trim();
  return `${method} ${path} answered ${response.status}${body ? `: ${body}` : " with an empty body"}`;
}
