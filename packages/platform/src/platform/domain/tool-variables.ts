/**
 * Environment variables that steer the programs a process starts, and the rule that keeps a
 * provider's from steering the programs `run` starts on this machine. A provider (or a broker)
 * names the variables of its bind answer; `make` reads CC, the JVM JAVA_OPTS, pip PIP_INDEX_URL,
 * git GIT_SSH_COMMAND, every HTTP client http_proxy. No list of such names is complete, so a
 * service's variable reaches a process only when its name has the shape of data about a service
 * (an allow shape), and never when it has the shape of a tool's setting (refusal patterns). That
 * is best effort: a tool reading a name of data's shape under a first word not listed here still
 * reads it (docs/tools/platform.md says so).
 * docs/tools/platform.md ("What reaches a process") says the same for users.
 */

/** Read by the dynamic loader or the shell before the app's own code runs (with `LD_*`). */
const LOADER_AND_SHELL = new Set(["PATH", "HOME", "BASH_ENV", "ENV", "IFS"]);
/**
 * Read by an interpreter, a library or a tool that the app's processes (and `run`'s) may start, to
 * load or run code of the variable's choosing: node, python, perl, ruby, java, bash, glibc, git,
 * ssh, npm, php, lua, openssl, less and the programs that open an editor, pager or browser.
 */
const CODE_HOOK_PREFIXES = ["NODE_", "PYTHON", "PERL5", "GIT_", "SSH_", "DYLD_", "NPM_CONFIG_", "LUA_INIT", "BASH_FUNC_"];
const CODE_HOOKS = new Set([
  "PERLLIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "SHELLOPTS", "BASHOPTS", "PS4",
  "PROMPT_COMMAND", "CDPATH", "GCONV_PATH", "LOCPATH", "NLSPATH", "GLIBC_TUNABLES", "HOSTALIASES", "BROWSER", "EDITOR", "VISUAL",
  "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "PHPRC", "PHP_INI_SCAN_DIR", "OPENSSL_CONF", "OPENSSL_ENGINES",
]);

/**
 * Why a variable would make the loader, the shell or a tool load or run code of its choosing, or
 * undefined: the variables no one may set for an app (a user or a provider).
 */
export function loadsCode(name: string): string | undefined {
  const shown = JSON.stringify(name.slice(0, 60));
  if (name.startsWith("LD_") || LOADER_AND_SHELL.has(name)) return `${shown} is read by the loader or the shell before the app's code runs`;
  const upper = name.toUpperCase();
  if (CODE_HOOKS.has(upper) || CODE_HOOK_PREFIXES.some((prefix) => upper.startsWith(prefix))) {
    return `${shown} makes an interpreter or tool the app's processes start (node, python, perl, ruby, java, the shell, git, ssh...) load or run code of its choosing`;
  }
  return undefined;
}

/**
 * The allow shapes of a service's variable: upper-case words joined by `_`, at least two
 * (`REDIS_HOST`, `DATABASE_URL`: a one-word name such as CC, PATH or MAKEFLAGS is a tool's), or a
 * name starting with a lower-case letter (a broker's `username`, `password`, `jdbcUrl`).
 */
const SERVICE_SHAPES = [/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/, /^[a-z][a-zA-Z0-9]*(?:_[a-zA-Z0-9]+)*$/];

/** A first word naming a tool, a language's runtime or package manager, the loader, the shell or the locale. */
const TOOL_WORDS = new Set([
  "LD", "DYLD", "GCONV", "GLIBC", "MALLOC", "LC", "XDG", "TERM", "BASH", "ZSH", "SHELL", "PROMPT", "LESS", "GIT", "SSH", "GPG",
  "CURL", "WGET", "SSL", "OPENSSL", "MAKE", "CMAKE", "CC", "CXX", "CPP", "NODE", "NPM", "NPX", "YARN", "PNPM", "BUN", "DENO",
  "COREPACK", "PIP", "PIPX", "PIPENV", "POETRY", "UV", "CONDA", "VIRTUAL", "PERL", "RUBY", "GEM", "BUNDLE", "JAVA", "JDK", "JRE",
  "MAVEN", "GRADLE", "SBT", "ERL", "ELIXIR", "MIX", "HEX", "REBAR", "GO", "CGO", "CARGO", "RUSTUP", "RUSTC", "RUST", "COMPOSER",
  "PHP", "LUA", "DOTNET", "NUGET", "DOCKER", "BUILDKIT", "COMPOSE", "PODMAN", "KUBE", "HELM", "NIX", "HOMEBREW", "REQUESTS",
  // Clients of clouds and secret stores (a broker's address there receives another service's
  // token), and tools that run a program or load a library a variable names.
  "CLOUDSDK", "GCLOUD", "GOOGLE", "AWS", "AZURE", "AZ", "VAULT", "CONSUL", "NOMAD", "TF", "TERRAFORM", "ANSIBLE", "OPENAI", "HF",
  "CONTAINER", "CONTAINERS", "DBUS", "CORECLR", "COR", "PYTEST", "SUDO", "ELECTRON", "CROSS", "CHROME", "PUPPETEER",
]);
/** A word anywhere in the name that makes it a setting: options, proxies, package sources, commands. */
const SETTING_WORDS = new Set([
  "OPTS", "OPTIONS", "PROXY", "PRELOAD", "REGISTRY", "MIRROR", "WRAPPER", "COMMAND", "CMD", "HOOK", "HOOKS", "PLUGIN", "PLUGINS",
  "EXEC", "LOADER", "ARGS", "ADDOPTS", "ASKPASS", "PROFILER", "PROFILING",
]);
/** A package index (`PIP_EXTRA_INDEX_URL`, `UV_INDEX_URL`...); a plain `*_INDEX` (a database's number) is data. */
const PACKAGE_INDEX = /(?:^|_)INDEX_URLS?(?:_|$)/;
/** A last word that makes it a place a tool reads from (its home, search path, config file...). */
const PLACE_WORDS = new Set(["HOME", "PATH", "DIR", "DIRS", "CONFIG", "CONF", "RC", "INIT", "LIB", "LIBS", "LIBRARY", "SHELL", "EDITOR", "PAGER", "BROWSER"]);

/** Whether a name has a tool setting's shape: `*_OPTS`, `*FLAGS`, `*_PROXY`, `*_INDEX_URL`, `LD_*`, `GIT_*`... */
function steersTools(name: string): boolean {
  const words = name.toUpperCase().split("_").filter((word) => word !== "");
  const [first = "", last = ""] = [words[0], words.at(-1)];
  return (
    TOOL_WORDS.has(first) ||
    /^(PYTHON|PERL|RUBY)/.test(first) ||
    words.some((word) => SETTING_WORDS.has(word)) ||
    PACKAGE_INDEX.test(name.toUpperCase()) ||
    PLACE_WORDS.has(last) ||
    last.endsWith("FLAGS")
  );
}

/**
 * Whether a variable from a service's bind answer becomes a variable of the processes `run`
 * starts: in an allow shape, not a tool's setting, and nothing a user is refused either. The
 * others stay in TSURU_SERVICES (and the app's env listing), where no tool reads them.
 */
export function reachesProcesses(name: string): boolean {
  return SERVICE_SHAPES.some((shape) => shape.test(name)) && !steersTools(name) && loadsCode(name) === undefined && !name.startsWith("TSURU_");
}
