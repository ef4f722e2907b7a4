// The loader of dist/headerSecretCommand.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as HeaderSecretCommandModule from '../headerSecretCommand';

/** Set Header Secret with its origin picker: loaded by the command. */
export const headerSecretCommand = (): typeof HeaderSecretCommandModule => require('./headerSecretCommand.js');
