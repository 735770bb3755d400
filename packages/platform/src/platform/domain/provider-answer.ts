/** How the platform words a provider's failure to its user: the provider's own body, or why none came. */
import { printable, type CallResult } from "provider-kit/contract";

const MAX_SHOWN = 500;

/**
 * A call's result as the platform reads it. A call to a broker's service that failed has no
 * native answer: `brokerProblem` holds the failure in the real platform's broker client's words
 * (osb-failure.ts), so no native status rule (a 404 taken as success, a 412) applies to a broker.
 */
export type PlatformCallResult = CallResult & { brokerProblem?: string };

/** An answer in the words of the platform's `buildErrorMessage`: `invalid response: <body> (code: N)`; a broker's failure in its own. */
export function providerProblem(result: PlatformCallResult): string {
  if (result.brokerProblem !== undefined) return result.brokerProblem;
  if (!result.answer) return `the provider did not answer (${result.error ?? "no answer"})`;
  // Shown on a terminal: one printable line, whatever the provider wrote.
  const body = printable(result.answer.body, { oneLine: true });
  const shown = body.length > MAX_SHOWN ? `${body.slice(0, MAX_SHOWN)}…` : body;
  return `invalid response: ${shown} (code: ${result.answer.status})`;
}

export const statusOf = (result: CallResult) => result.answer?.status;
export const succeeded = (result: CallResult) => result.answer !== undefined && result.answer.status < 300;
