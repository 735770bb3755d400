/** How the platform words a provider's failure to its user: the provider's own body, or why none came. */
import type { CallResult } from "provider-kit/contract";

const MAX_SHOWN = 500;

/** An answer in the words of the platform's `buildErrorMessage`: `invalid response: <body> (code: N)`. */
export function providerProblem(result: CallResult): string {
  if (!result.answer) return `the provider did not answer (${result.error ?? "no answer"})`;
  const body = result.answer.body.trim().replace(/\s+/g, " ");
  const shown = body.length > MAX_SHOWN ? `${body.slice(0, MAX_SHOWN)}…` : body;
  return `invalid response: ${shown} (code: ${result.answer.status})`;
}

export const statusOf = (result: CallResult) => result.answer?.status;
export const succeeded = (result: CallResult) => result.answer !== undefined && result.answer.status < 300;
