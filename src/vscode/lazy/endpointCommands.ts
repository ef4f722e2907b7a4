// The loader of dist/endpointCommands.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's
// own bundle leaves it for first use.
import type * as EndpointCommandsModule from '../endpointCommands';

/** Select Model, Switch Endpoint, the presets, the resets and the key commands: loaded by the first of these commands or header picks. */
export const endpointCommands = (): typeof EndpointCommandsModule => require('./endpointCommands.js');
