/**
 * Subcommands that live in packages of their own (`check` in @provider-kit/conformance,
 * `platform` and `dev` in @provider-kit/platform): each package exports a `register...(program)` from its
 * `/cli` subpath. A package is loaded only when its command runs (or its help is asked for), so the
 * other commands start without it. A provider that does not install one still sees the subcommand
 * in --help, and running it says what to install (exit 2, a usage error).
 */
import { Help, type Command } from "commander";
import { EXIT } from "./exit-codes.js";

interface OptionalCommand {
  name: string;
  /** Shown in the command list of --help; the package's own description shows in the command's --help. */
  description: string;
  packageName: string;
  /** The function the package's `/cli` subpath exports to add the subcommand. */
  register: string;
}

type CliModule = Record<string, unknown>;

/** The subcommand a command line runs (`help <name>` asks for that one's help), if any. */
export function commandNamed(args: readonly string[]): string | undefined {
  const [first, second] = args.filter((arg) => !arg.startsWith("-"));
  return first === "help" ? second : first;
}

/** Whether the package's `/cli` resolves from here, without loading it. */
function installed(packageName: string): boolean {
  try {
    import.meta.resolve(`${packageName}/cli`);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND") return false;
    throw error;
  }
}

function addMissing(program: Command, command: OptionalCommand): void {
  program
    .command(command.name)
    .description(`${command.description} (needs ${command.packageName})`)
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      console.error(`provider-kit ${command.name} needs the ${command.packageName} package: npm install --save-dev ${command.packageName}`);
      process.exitCode = EXIT.usage;
    });
}

/**
 * The commands of installed packages that this command line does not run: listed in --help as
 * their package lists them (`check [options]`: each has options), never loaded.
 */
const listedOnly = new WeakSet<Command>();

function addListed(program: Command, command: OptionalCommand): void {
  listedOnly.add(program.command(command.name).description(command.description));
}

async function addLoaded(program: Command, command: OptionalCommand): Promise<void> {
  // A specifier in a variable: the compiler must not tie this package's build to theirs.
  const specifier = `${command.packageName}/cli`;
  const module = (await import(specifier)) as CliModule;
  const register = module[command.register];
  if (typeof register !== "function") {
    throw new Error(`${specifier} exports no ${command.register}(program): reinstall ${command.packageName} at the version of provider-kit.`);
  }
  (register as (program: Command) => void)(program);
}

/** Adds an optional command, loading its package only when `invoked` (the command line's command) is this one. */
export async function registerOptional(program: Command, command: OptionalCommand, invoked: string | undefined): Promise<void> {
  if (!installed(command.packageName)) addMissing(program, command);
  else if (invoked === command.name) await addLoaded(program, command);
  else addListed(program, command);
}

/** The program's help: an optional command that was not loaded is listed as its package lists it. */
export const optionalCommandsHelp = {
  subcommandTerm(command: Command): string {
    const term = new Help().subcommandTerm(command);
    return listedOnly.has(command) ? term.replace(command.name(), `${command.name()} [options]`) : term;
  },
};
