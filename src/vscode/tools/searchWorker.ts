// search_text's worker thread: matches each file's text it is sent against the search's regular expression, so that a
// slow pattern blocks this thread, never the extension host's (searchEngine.ts starts it, bounds it and ends it).
import { parentPort, workerData } from 'node:worker_threads';
import { matchingLines } from '../../core/lineMatch';
import type { SearchJob, SearchReply, SearchWorkerData } from './searchEngine';

const { source, flags } = workerData as SearchWorkerData;
const re = new RegExp(source, flags);
const port = parentPort;
port?.on('message', (job: SearchJob) => {
  let reply: SearchReply;
  try {
    reply = { id: job.id, ...matchingLines(job.text, re, job.max) };
  } catch (e) {
    reply = { id: job.id, error: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply);
});
