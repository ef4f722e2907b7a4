// Types for runs.mjs.
export interface IntegrationRun {
  name: string;
  workspace: string;
  workspaceFile?: string;
  trust: boolean;
  settings: Record<string, unknown>;
  tests: string[];
}
export declare const runs: IntegrationRun[];
export declare function selectTests(run: IntegrationRun, all: string[]): string[];
