/**
 * `provider-kit/cli`: what the packages that add a subcommand to the `provider-kit` command
 * (`check`, `platform`) share with it: reading a provider's action declarations, this
 * installation's version, the exit codes every command shares and whether to colour output.
 */
export { colorOn } from "../cli/color.js";
export { EXIT, SIGNAL_EXIT } from "../cli/exit-codes.js";
export { loadActions } from "../cli/actions-module.js";
export { ownPackage } from "../cli/own-package.js";
