// The search worker's bundled source, as a string (esbuild.mjs resolves this module).
declare module 'parley:search-worker' {
  const source: string;
  export default source;
}
