// dist/highlightWorker.js: the highlighting worker's bundled source as a string, for the page to start from a blob:
// URL (highlight.ts loads this script when highlighting is first wanted, so the panel gets ready without it).
import source from 'parley:highlight-worker';

window.parleyHighlightWorkerSource = source;
