// Types for harness.mjs.
export declare const CHROMIUM: { executablePath: string; args: string[] };
export interface Harness {
  url: string;
  origin: string;
  /** Every path the server was asked for. */
  served: string[];
  close(): Promise<void>;
}
export declare function startHarness(options?: {
  distDir?: string;
  extraFiles?: Record<string, string>;
  /** The page's Content Security Policy for a resource origin and a nonce (default: the host's own, src/shared/csp.ts). */
  csp?: (cspSource: string, nonce: string) => string;
}): Promise<Harness>;
