/** What the `platform` and `dev` commands share: their port flag and what they let reach the terminal. */
import { InvalidArgumentError } from "commander";

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError("give a port number from 0 to 65535.");
  return port;
}

/**
 * A line as it may reach the terminal: control and invisible characters (a provider's answer, an
 * address someone typed) are shown escaped, so nobody can move the cursor, forge lines or turn
 * text around there. The rule is the one every package shows provider text by.
 */
export { printable } from "provider-kit/contract";
