// The loader of dist/apply.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use. The command table, the chat's routes and the toolbox (propose_edit) share it, so the
// reviews any of them opened are closed with the window's commands.
import type * as ApplyModule from '../apply/apply';

/** Whether apply() was called (nothing to close otherwise, and no reason to load it). */
let applyLoaded = false;

/** Apply with its reviews and jsdiff: loaded by the first Apply, review command or propose_edit. */
export const apply = (): typeof ApplyModule => {
  applyLoaded = true;
  return require('./apply.js');
};

/** Closes Apply's open reviews (each counts as closed without Accept); loads nothing when Apply never ran. */
export function disposeReviews(): void {
  if (applyLoaded) apply().disposeReviews();
}
