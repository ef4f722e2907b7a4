// Types for harness.mjs.
export declare const CHROMIUM: { executablePath: string; args: string[] };
export interface Harness {
  url: string;
  origin: string;
  /** Every path the server was asked for. */
  served: string[];
  close(): Promise<void>;
}
export declare function startHarness(options?: { distDir?: string; extraFiles?: Record<string, string> }): Promise<Harness>;
