/**
 * The exit codes every `provider-kit` command shares, so a script or CI job reads them the same
 * way whatever it ran; `provider-kit <command> --help` lists them.
 */
export const EXIT = {
  /** The command did what was asked (check: every MUST check passed). */
  ok: 0,
  /** check: a MUST check failed. */
  failed: 1,
  /** Bad usage, or the command could not start (a setting, a file, the provider unreachable): the message says what to change. */
  usage: 2,
  /** provider-kit itself broke: a bug to report. */
  broken: 3,
} as const;

/** Interrupted: 128 + the signal's number, as shells report it. */
export const SIGNAL_EXIT: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };

export const EXIT_CODES_HELP = [
  "",
  "Exit codes:",
  "  0        done (check: every MUST check passed)",
  "  1        check: a MUST check failed",
  "  2        bad usage or a start-up error: the message says what to change",
  "  3        provider-kit itself broke: please report it",
  "  130/143  interrupted (SIGINT/SIGTERM)",
].join("\n");
