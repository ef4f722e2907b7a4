// Provider conformance (issue 2, section 4): every transcript in test/fixtures/providers/ is replayed through the
// client from a real local HTTP server, whole, byte by byte and at random split points (three seeds: small, large and
// mixed pieces), and the result is checked against values written by hand in conformance.expected.ts (derived by
// reading the transcripts, never by running Parley). The transcripts are the repository's own copy of the team's
// recordings (test/fixtures/providers/SOURCES.md says where each comes from), so a fresh clone passes alone.
// When the folder is missing this suite FAILS, it does not skip.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import * as path from 'node:path';
import { complete, streamChat, type ClientOptions } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import type { ChatResult, StreamEvent } from '../../src/core/types';
import { allWays, startTestServer, wayLabel, writeWay, type Way } from '../support/server';
import { FIXTURES, type Case, type Expected, type RecordedHeaders, type Serve, type TextExpectation } from './conformance.expected';
import { repoRoot } from '../support/repoRoot';


const FIXTURES_DIR = path.resolve(repoRoot(), 'test/fixtures/providers');
/** Not transcripts: the provenance table, and derived-sse/ (replayed through its .chunks.jsonl entry). */
const NOT_TRANSCRIPTS = new Set(['SOURCES.md', 'derived-sse']);
/** Hop-by-hop or length headers that Node manages itself; never replayed from a recording. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

const fixturePath = (rel: string) => path.join(FIXTURES_DIR, rel);

/** A reproducible seed per case, so a failing random split can be replayed. */
function seedFor(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32LE(0) || 1;
}

function recordedHeaders(h: RecordedHeaders): Record<string, string | string[]> {
  const all = JSON.parse(fs.readFileSync(fixturePath(h.file), 'utf8')) as Record<string, Record<string, string[]>>;
  const got = all[h.key];
  assert.ok(got, `${h.file} has no "${h.key}"`);
  const out: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(got)) if (!HOP_BY_HOP.has(name.toLowerCase())) out[name] = values;
  return out;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** A curl -v transcript: `< HTTP/1.1 200 OK`, `< Name: value` lines, `<`, `* ...` notes, then the body. */
function parseCurl(text: string): Reply {
  const lines = text.split(/\r?\n/);
  const statusLine = lines[0].match(/^< HTTP\/[\d.]+ (\d{3})/);
  assert.ok(statusLine, 'curl transcript: no status line');
  const headers: Record<string, string> = {};
  let i = 1;
  let contentLength: number | undefined;
  for (; i < lines.length && lines[i] !== '<'; i++) {
    const m = lines[i].match(/^< ([^:]+): (.*)$/);
    assert.ok(m, `curl transcript: unexpected header line ${JSON.stringify(lines[i])}`);
    if (m[1].toLowerCase() === 'content-length') contentLength = Number(m[2]);
    if (!HOP_BY_HOP.has(m[1].toLowerCase())) headers[m[1]] = m[2];
  }
  const bodyLines = lines.slice(i + 1).filter((l) => !l.startsWith('* '));
  while (bodyLines.length && bodyLines[bodyLines.length - 1] === '') bodyLines.pop();
  const body = Buffer.from(bodyLines.join('\n'), 'utf8');
  if (contentLength !== undefined) assert.equal(body.length, contentLength, 'curl transcript: body length differs from the recorded Content-Length');
  return { status: Number(statusLine[1]), headers, body };
}

/** What the server sends for a case: status, headers and the body bytes, from the transcript as it is on disk. */
function replyFor(file: string, serve: Serve): Reply {
  switch (serve.kind) {
    case 'sse':
      return {
        status: 200,
        headers: serve.headersFrom ? recordedHeaders(serve.headersFrom) : { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
        body: fs.readFileSync(fixturePath(serve.file ?? file)),
      };
    case 'jsonl': {
      const lines = fs.readFileSync(fixturePath(file), 'utf8').split('\n').filter((l) => l.trim() !== '');
      return {
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
        body: Buffer.from(lines.map((l) => `data: ${l}\n\n`).join(''), 'utf8'),
      };
    }
    case 'json':
      return {
        status: serve.status,
        headers: serve.headersFrom ? recordedHeaders(serve.headersFrom) : { 'content-type': 'application/json' },
        body: fs.readFileSync(fixturePath(serve.file ?? file)),
      };
    case 'chunk-as-sse': {
      const chunk = JSON.parse(fs.readFileSync(fixturePath(file), 'utf8'));
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: Buffer.from(`data: ${JSON.stringify(chunk)}\n\n`, 'utf8') };
    }
    case 'curl':
      return parseCurl(fs.readFileSync(fixturePath(file), 'utf8'));
  }
}

interface Run {
  result: ChatResult;
  /** Stream events (streamChat only). */
  events?: StreamEvent[];
}

async function replay(file: string, c: Case, way: Way): Promise<Run> {
  const reply = replyFor(file, c.serve);
  const server = await startTestServer(async (_req, res: ServerResponse) => {
    res.writeHead(reply.status, reply.headers);
    await writeWay(res, reply.body, way);
  });
  try {
    const opts: ClientOptions = {
      endpoint: resolveEndpoint(server.url),
      apiKey: c.expect.error?.secret ?? 'sk-conformance-test',
      maxRetries: 0,
      requestTimeoutMs: 15_000,
      idleTimeoutMs: 15_000,
    };
    const body = { model: 'conformance-model', messages: [{ role: 'user', content: 'Hello' }] };
    if (c.via === 'complete') return { result: await complete(opts, body) };
    const stream = streamChat(opts, { ...body, stream: true, stream_options: { include_usage: true } });
    const events: StreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    return { result: await stream.result, events };
  } finally {
    await server.close();
  }
}

function sha256(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

function checkText(actual: string, expected: TextExpectation, what: string): void {
  assert.equal(typeof actual, 'string', `${what} is not a string`);
  if (typeof expected === 'string') {
    assert.equal(actual, expected, what);
    return;
  }
  assert.ok(actual.startsWith(expected.startsWith), `${what} starts ${JSON.stringify(actual.slice(0, 60))}, expected ${JSON.stringify(expected.startsWith)}`);
  assert.ok(actual.endsWith(expected.endsWith), `${what} ends ${JSON.stringify(actual.slice(-60))}, expected ${JSON.stringify(expected.endsWith)}`);
  assert.equal(actual.length, expected.length, `${what}: length`);
  assert.ok(!actual.includes('\uFFFD'), `${what} contains U+FFFD`);
  assert.equal(sha256(actual), expected.sha256, `${what}: SHA-256 of the UTF-8 text`);
}

function checkResult(run: Run, exp: Expected): void {
  const r = run.result;

  // End state first: it explains most other differences.
  assert.equal(r.ended, exp.ended, `ended (error: ${r.error ? String(r.error) : 'none'})`);
  if (exp.sawDone !== undefined) assert.equal(r.sawDone, exp.sawDone, 'sawDone');

  checkText(r.text, exp.text, 'text');
  checkText(r.reasoning, exp.reasoning, 'reasoning');
  assert.equal(r.refusal, exp.refusal, 'refusal');

  assert.ok(Array.isArray(r.toolCalls), 'toolCalls is an array');
  for (const t of r.toolCalls) assert.equal(t.type, 'function', `tool call ${t.id}: type`);
  assert.deepEqual(
    r.toolCalls.map((t) => ({ id: t.id, name: t.function.name, arguments: t.function.arguments })),
    exp.toolCalls,
    'toolCalls',
  );

  assert.equal(r.finishReason, exp.finishReason, 'finishReason');

  assert.ok(r.usage, 'usage is always present');
  if ('estimated' in exp.usage) {
    assert.equal(r.usage.estimated, true, `usage.estimated (got ${JSON.stringify(r.usage)})`);
  } else {
    assert.ok(!r.usage.estimated, `usage must be the server's, not an estimate (got ${JSON.stringify(r.usage)})`);
    assert.equal(r.usage.prompt_tokens, exp.usage.prompt_tokens, 'usage.prompt_tokens');
    assert.equal(r.usage.completion_tokens, exp.usage.completion_tokens, 'usage.completion_tokens');
    assert.equal(r.usage.total_tokens, exp.usage.total_tokens, 'usage.total_tokens');
    if (exp.usage.reasoning_tokens !== undefined)
      assert.equal(r.usage.completion_tokens_details?.reasoning_tokens, exp.usage.reasoning_tokens, 'usage.completion_tokens_details.reasoning_tokens');
    if (exp.usage.cached_tokens !== undefined)
      assert.equal(r.usage.prompt_tokens_details?.cached_tokens, exp.usage.cached_tokens, 'usage.prompt_tokens_details.cached_tokens');
  }

  // Choices are kept apart by index, and the top-level fields mirror choice 0.
  assert.ok(Array.isArray(r.choices), 'choices is an array');
  if (exp.choiceCount !== undefined) assert.equal(r.choices.length, exp.choiceCount, 'number of choices');
  const c0 = r.choices.find((c) => c.index === 0);
  if (c0) {
    assert.equal(c0.text, r.text, 'choice 0 text mirrors text');
    assert.equal(c0.reasoning, r.reasoning, 'choice 0 reasoning mirrors reasoning');
    assert.equal(c0.refusal, r.refusal, 'choice 0 refusal mirrors refusal');
    assert.equal(c0.finishReason, r.finishReason, 'choice 0 finishReason mirrors finishReason');
    assert.deepEqual(c0.toolCalls, r.toolCalls, 'choice 0 toolCalls mirror toolCalls');
  }
  for (const ec of exp.choices ?? []) {
    const c = r.choices.find((x) => x.index === ec.index);
    assert.ok(c, `choice ${ec.index} is missing`);
    checkText(c.text, ec.text, `choice ${ec.index} text`);
    assert.equal(c.finishReason, ec.finishReason, `choice ${ec.index} finishReason`);
  }

  if (exp.error) {
    const e = r.error;
    assert.ok(e, 'result.error is set');
    const kinds = Array.isArray(exp.error.kind) ? exp.error.kind : [exp.error.kind];
    assert.ok(kinds.includes(e.kind), `error.kind ${e.kind}, expected ${kinds.join(' or ')} (${String(e)})`);
    if (exp.error.status !== undefined) assert.equal(e.status, exp.error.status, 'error.status');
    if (exp.error.code !== undefined) assert.equal(e.code === undefined ? undefined : String(e.code), exp.error.code, 'error.code');
    if (exp.error.param !== undefined) assert.equal(e.param, exp.error.param, 'error.param');
    if (exp.error.messageIncludes) {
      const said = `${e.providerMessage ?? ''}\n${e.message}`;
      assert.ok(
        exp.error.messageIncludes.some((m) => said.includes(m)),
        `the error should carry the server's message (one of ${JSON.stringify(exp.error.messageIncludes)}); got providerMessage ${JSON.stringify(e.providerMessage)}, message ${JSON.stringify(e.message)}`,
      );
    }
    if (exp.error.secret) {
      for (const [where, s] of [
        ['message', e.message],
        ['toString()', String(e)],
        ['providerMessage', e.providerMessage ?? ''],
      ] as const)
        assert.ok(!s.includes(exp.error.secret), `the echoed API key appears in error ${where}: ${s}`);
    }
  } else {
    assert.equal(r.error, undefined, `no error expected, got ${r.error ? String(r.error) : ''}`);
  }

  // The events tell the same story as the result.
  if (run.events) {
    const ev = run.events;
    const ends = ev.filter((e) => e.type === 'end');
    assert.equal(ends.length, 1, 'exactly one end event');
    assert.equal(ev[ev.length - 1].type, 'end', 'the end event comes last');
    const end = ends[0] as Extract<StreamEvent, { type: 'end' }>;
    assert.equal(end.state, r.ended, 'end event state');
    const joined = (type: 'text' | 'reasoning' | 'refusal') =>
      ev.flatMap((e) => ((e.type === 'text' || e.type === 'reasoning' || e.type === 'refusal') && e.type === type && e.choice === 0 ? [e.text] : [])).join('');
    assert.equal(joined('text'), r.text, 'text events of choice 0 add up to text');
    assert.equal(joined('reasoning'), r.reasoning, 'reasoning events of choice 0 add up to reasoning');
    assert.equal(joined('refusal'), r.refusal, 'refusal events of choice 0 add up to refusal');
  }
}

/** The comparable part of a run, for "all three ways give identical results". */
function snapshot(run: Run): unknown {
  const { error, ...rest } = run.result;
  // Each replay has its own server, so messages naming the port are compared without it.
  const noPort = (s: string | undefined) => s?.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
  return {
    ...rest,
    error: error && {
      kind: error.kind,
      status: error.status,
      code: error.code,
      param: error.param,
      message: noPort(error.message),
      providerMessage: noPort(error.providerMessage),
    },
    events: run.events && mergeDeltas(run.events.map((e) => (e.type === 'end' ? { type: 'end', state: e.state, error: e.error && e.error.kind } : e)) as StreamEvent[]),
  };
}

/**
 * The client merges consecutive text (or reasoning) deltas that arrive in one network read into one event, so
 * where one event ends depends on how the bytes were split. Merged the same way here, the sequences must match.
 */
function mergeDeltas(events: StreamEvent[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if ((e.type === 'text' || e.type === 'reasoning') && last?.type === e.type && last.choice === e.choice) {
      out[out.length - 1] = { ...last, text: last.text + e.text };
    } else {
      out.push(e);
    }
  }
  return out;
}

describe('provider conformance: test/fixtures/providers', function () {
  this.timeout(120_000);
  const present = fs.existsSync(FIXTURES_DIR) && fs.statSync(FIXTURES_DIR).isDirectory();

  it('the fixtures folder exists (it does in CI; this suite never skips)', () => {
    assert.ok(present, `provider fixtures not found at ${FIXTURES_DIR}: they are part of the repository (git checkout test/fixtures)`);
  });
  if (!present) return;

  it('every transcript has an expectation, and every expectation a transcript', () => {
    const onDisk = fs.readdirSync(FIXTURES_DIR).filter((f) => !NOT_TRANSCRIPTS.has(f)).sort();
    const covered = FIXTURES.map((f) => f.file).sort();
    assert.deepEqual(covered, [...new Set(covered)], 'duplicate entries in conformance.expected.ts');
    assert.deepEqual(covered, onDisk, 'conformance.expected.ts must cover exactly the transcripts in the folder');
    for (const f of onDisk.filter((n) => n.endsWith('.chunks.jsonl')))
      assert.ok(fs.existsSync(fixturePath(`derived-sse/${f.replace(/\.chunks\.jsonl$/, '.sse')}`)), `derived-sse framing missing for ${f}`);
  });

  for (const entry of FIXTURES) {
    describe(`${entry.file} (${entry.exercises})`, () => {
      for (const c of entry.cases) {
        describe(`${c.label}, via ${c.via === 'complete' ? 'complete()' : 'streamChat()'}`, () => {
          const seed = seedFor(`${entry.file}|${c.label}|${c.via}`);
          const ways = allWays(seed);
          const runs = new Map<string, Run>();
          for (const way of ways) {
            it(wayLabel(way), async () => {
              const run = await replay(entry.file, c, way);
              runs.set(wayLabel(way), run);
              checkResult(run, c.expect);
            });
          }
          it('all three ways give identical results', function () {
            assert.equal(runs.size, ways.length, 'every way must have run (a failing way is reported above)');
            const whole = snapshot(runs.get('whole')!);
            for (const way of ways.slice(1)) assert.deepEqual(snapshot(runs.get(wayLabel(way))!), whole, `${wayLabel(way)} vs whole`);
          });
        });
      }
    });
  }
});
