// The highlighting worker's bundled source, as a string (scripts/webview-build.mjs resolves this module).
declare module 'parley:highlight-worker' {
  const source: string;
  export default source;
}
