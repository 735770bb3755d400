/**
 * Subcommands that live in packages of their own (`check` in @provider-kit/conformance,
 * `platform` and `dev` in @provider-kit/platform): each package exports a `register...(program)` from its
 * `/cli` subpath. A provider that does not install one still sees the subcommand in --help, and
 * running it says what to install (exit 2, a usage error).
 */
import type { Command } from "commander";
import { EXIT } from "./exit-codes.js";

interface OptionalCommand {
  name: string;
  /** Shown in --help when the package is not installed. */
  description: string;
  packageName: string;
  /** The function the package's `/cli` subpath exports to add the subcommand. */
  register: string;
}

type CliModule = Record<string, unknown>;

function isMissing(error: unknown, packageName: string): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === "ERR_MODULE_NOT_FOUND" && typeof message === "string" && message.includes(`'${packageName}'`);
}

export async function registerOptional(program: Command, command: OptionalCommand): Promise<void> {
  // A specifier in a variable: the compiler must not tie this package's build to theirs.
  const specifier = `${command.packageName}/cli`;
  let module: CliModule;
  try {
    module = (await import(specifier)) as CliModule;
  } catch (error) {
    if (!isMissing(error, command.packageName)) throw error;
    program
      .command(command.name)
      .description(`${command.description} (needs ${command.packageName})`)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action(() => {
        console.error(
          `provider-kit ${command.name} needs the ${command.packageName} package: npm install --save-dev ${command.packageName}`,
        );
        process.exitCode = EXIT.usage;
      });
    return;
  }
  const register = module[command.register];
  if (typeof register !== "function") {
    throw new Error(`${specifier} exports no ${command.register}(program): reinstall ${command.packageName} at the version of provider-kit.`);
  }
  (register as (program: Command) => void)(program);
}
