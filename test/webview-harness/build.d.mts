// Types for build.mjs.
export declare function buildWebview(options?: { outdir?: string; production?: boolean }): Promise<string>;
