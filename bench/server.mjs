// The client benchmark's server, run as its own process so that writing never takes CPU from the reader being timed.
// Any path under /paced/ gets the paced stream, any other path the full-speed one.
// Prints {"port": N, "bytes": body size} on stdout once listening; exits when its stdin closes (the benchmark exited or crashed).
import { createServer } from 'node:http';

const CHUNKS = Number(process.argv[2] ?? 20_000);

const content = Buffer.from('data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}\n\n');
const tail = [
  'data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
  'data: {"id":"x","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":' + CHUNKS + ',"total_tokens":' + (CHUNKS + 5) + '}}\n\n',
  'data: [DONE]\n\n',
].map((s) => Buffer.from(s));
// Built once, so that the full-speed path costs the server one write: the reader is what is measured.
const whole = Buffer.concat([...Array(CHUNKS).fill(content), ...tail]);

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (!req.url?.startsWith('/paced/')) {
      res.end(whole);
      return;
    }
    // Paced: one write per turn of this process's event loop, as a server that flushes every token would do.
    // The reader then gets a few chunks per read instead of hundreds.
    res.flushHeaders();
    let i = 0;
    const step = () => {
      if (res.destroyed) return;
      if (i < CHUNKS) {
        res.write(content);
        i++;
        setImmediate(step);
      } else {
        for (const t of tail) res.write(t);
        res.end();
      }
    };
    step();
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port, bytes: whole.length })}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
