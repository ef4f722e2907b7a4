// The virtual module that esbuild.mjs generates: every test/integration/**/*.test.ts, by name, loaded on demand.
declare module 'parley:integration-tests' {
  const testFiles: Record<string, () => unknown>;
  export = testFiles;
}
