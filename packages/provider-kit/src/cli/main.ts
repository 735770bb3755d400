#!/usr/bin/env node
/**
 * The `provider-kit` command. Each command lives in its own module and registers itself here.
 * `check`, `platform` and `dev` live in packages of their own, loaded only to run (or explain) that
 * command: without them the command still lists them, and running one says which package to install.
 */
import { Command, CommanderError } from "commander";
import { registerInit } from "./init.js";
import { registerManifest } from "./manifest.js";
import { EXIT, EXIT_CODES_HELP } from "./exit-codes.js";
import { ownPackage } from "./own-package.js";
import { commandNamed, optionalCommandsHelp, registerOptional } from "./optional.js";

const program = new Command("provider-kit")
  .description("Build, check and register provider services for the Tsuru platform.")
  .version(ownPackage().pkg.version, "-v, --version", "print the version of provider-kit")
  // Commander exits by itself on bad usage; the override lets usage errors exit with 2.
  .exitOverride()
  .configureHelp(optionalCommandsHelp);

const invoked = commandNamed(process.argv.slice(2));

await registerOptional(program, {
  name: "check",
  description: "play the platform against a running provider and report, check by check, where it differs from the contract",
  packageName: "@provider-kit/conformance",
  register: "registerCheck",
}, invoked);
registerInit(program);
registerManifest(program);
await registerOptional(program, {
  name: "platform",
  description: "run a local platform: the management API (users, teams, services, instances, apps, binds) driving real providers",
  packageName: "@provider-kit/platform",
  register: "registerPlatform",
}, invoked);
await registerOptional(program, {
  name: "dev",
  description:
    "run the provider project in this directory on a local platform: the provider restarted on every change to its sources or .env, " +
    "its service registered with its plans and actions, a team and a demo app",
  packageName: "@provider-kit/platform",
  register: "registerDev",
}, invoked);
for (const command of [program, ...program.commands]) command.addHelpText("after", EXIT_CODES_HELP);

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
  process.exitCode = USAGE_ERRORS.has(error.code) ? EXIT.usage : error.exitCode;
}
