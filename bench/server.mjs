// The client benchmark's server, run as its own process so that writing never takes CPU from the reader being timed.
// Any path under /paced/ gets the paced stream, any other path the full-speed one; a path ending in /responses gets the
// same text as the Responses API streams it.
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

// The same text as the Responses API streams it (POST …/responses): one `response.output_text.delta` event per piece,
// in OpenAI's framing and fields (test/fixtures/responses/openai-tool-call.sse is a recording), then `response.completed`.
const responsesEvent = (o) => Buffer.from(`event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`);
const responsesContent = Array.from({ length: CHUNKS }, (_, i) =>
  responsesEvent({ type: 'response.output_text.delta', content_index: 0, delta: 'tok ', item_id: 'msg_0bench', logprobs: [], output_index: 0, sequence_number: i + 4 }));
const responsesHead = [
  responsesEvent({ type: 'response.created', response: { id: 'resp_bench', object: 'response', status: 'in_progress', model: 'm', output: [], usage: null }, sequence_number: 0 }),
  responsesEvent({ type: 'response.output_item.added', item: { id: 'msg_0bench', type: 'message', status: 'in_progress', content: [], role: 'assistant' }, output_index: 0, sequence_number: 1 }),
];
const responsesTail = [
  responsesEvent({ type: 'response.output_item.done', item: { id: 'msg_0bench', type: 'message', status: 'completed', content: [], role: 'assistant' }, output_index: 0, sequence_number: CHUNKS + 4 }),
  responsesEvent({ type: 'response.completed', response: { id: 'resp_bench', object: 'response', status: 'completed', model: 'm', output: [], usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: CHUNKS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: CHUNKS + 5 } }, sequence_number: CHUNKS + 5 }),
];
const responsesWhole = Buffer.concat([...responsesHead, ...responsesContent, ...responsesTail]);

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const responses = req.url?.endsWith('/responses');
    if (!req.url?.startsWith('/paced/')) {
      res.end(responses ? responsesWhole : whole);
      return;
    }
    const [head, pieces, end] = responses ? [responsesHead, responsesContent, responsesTail] : [[], Array(CHUNKS).fill(content), tail];
    for (const h of head) res.write(h);
    // Paced: one write per turn of this process's event loop, as a server that flushes every token would do.
    // The reader then gets a few chunks per read instead of hundreds.
    res.flushHeaders();
    let i = 0;
    const step = () => {
      if (res.destroyed) return;
      if (i < CHUNKS) {
        res.write(pieces[i]);
        i++;
        setImmediate(step);
      } else {
        for (const t of end) res.write(t);
        res.end();
      }
    };
    step();
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port, bytes: whole.length, responsesBytes: responsesWhole.length })}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
