// The loader of dist/historyImages.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as HistoryImagesModule from '../historyImages';

/** The images of saved conversations: loaded by the first conversation with images. */
export const historyImages = (): typeof HistoryImagesModule => require('./historyImages.js');
