// Types for build.mjs.
export declare function buildWebview(options?: { outdir?: string; production?: boolean }): Promise<string>;

/** Bundles one module of src for a page, as an iife that puts its exports on `window[globalName]`; returns its text. */
export function bundleForPage(entry: string, globalName: string): Promise<string>;
