// Loads Apply on first use (dist/apply.js, LAZY in esbuild.mjs). The command table, the chat's routes and the toolbox
// (propose_edit) share this one loader, so the reviews any of them opened are closed with the window's commands.
import type * as Apply from './apply';

/** Whether applyModule() was called (nothing to close otherwise, and no reason to load it). */
let applyLoaded = false;

/** Apply and its reviews, loaded on first use: dist/apply.js (see LAZY in esbuild.mjs). */
export function applyModule(): typeof Apply {
  applyLoaded = true;
  return require('./apply.js') as typeof Apply;
}

/** Closes the open reviews (each counts as closed without Accept); loads nothing when Apply never ran. */
export function disposeReviews(): void {
  if (applyLoaded) applyModule().disposeReviews();
}
