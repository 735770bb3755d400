#!/usr/bin/env node
/**
 * The `provider-kit` command. Each command lives in its own module and registers itself here:
 * one import and one `register...(program)` line per command.
 */
import { Command, CommanderError } from "commander";
import { registerCheck } from "./check.js";
import { registerInit } from "./init.js";
import { registerManifest } from "./manifest.js";
import { ownPackage } from "./own-package.js";
import { registerPlatform } from "./platform.js";

const program = new Command("provider-kit")
  .description("Build, check and register provider services for the Tsuru platform.")
  .version(ownPackage().pkg.version, "-v, --version", "print the version of provider-kit")
  // Commander exits by itself on bad usage; the override lets usage errors exit with 2.
  .exitOverride();

registerCheck(program);
registerInit(program);
registerManifest(program);
registerPlatform(program);

/** Commander error codes that mean "the command line is wrong". */
const USAGE_ERRORS = new Set([
  "commander.unknownOption",
  "commander.unknownCommand",
  "commander.missingArgument",
  "commander.missingMandatoryOptionValue",
  "commander.optionMissingArgument",
  "commander.invalidArgument",
  "commander.excessArguments",
  "commander.conflictingOption",
]);

try {
  await program.parseAsync();
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  process.exitCode = USAGE_ERRORS.has(error.code) ? 2 : error.exitCode;
}
