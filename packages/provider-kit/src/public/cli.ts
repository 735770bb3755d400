/**
 * `provider-kit/cli`: what the packages that add a subcommand to the `provider-kit` command
 * (`check`, `platform`) share with it: reading a provider's action declarations and this
 * installation's version.
 */
export { loadActions } from "../cli/actions-module.js";
export { ownPackage } from "../cli/own-package.js";
