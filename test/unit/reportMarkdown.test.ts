// Server strings in Parley's Markdown reports (Test Connection, usage) stay literal text in a Markdown preview.
import * as assert from 'node:assert/strict';
import MarkdownIt from 'markdown-it';
import type { ServerResponse } from 'node:http';
import { diagnose, reportMarkdown } from '../../src/core/diagnose';
import { resolveEndpoint } from '../../src/core/endpoint';
import { codeSpan, markdownProse, noticeText } from '../../src/core/markdownText';
import { addTo, addToLedger, emptyTotals, recordFrom, tooltipMarkdown } from '../../src/core/usageLedger';
import { reportMarkdown as usageReport } from '../../src/core/usageReport';
import { pricingOnly } from '../support/pricing';
import { startTestServer, type RecordedRequest, type TestServer } from '../support/server';

/** VS Code's Markdown preview: raw HTML on, bare URLs linked (not bare domains), as in markdown-language-features. */
function preview(): MarkdownIt {
  const md = new MarkdownIt({ html: true, linkify: true });
  md.linkify.set({ fuzzyLink: false });
  return md;
}

/** The same with bare domains linked too (markdown-it's default), the stricter case. */
function fuzzyPreview(): MarkdownIt {
  return new MarkdownIt({ html: true, linkify: true });
}

interface Rendered {
  /** Token types that would fetch, link or inject: image, link_open, html_inline, html_block. */
  active: string[];
  /** Each line's visible text (text, code spans and escapes joined), as a reader sees it. */
  lines: string[];
}

function render(md: MarkdownIt, src: string): Rendered {
  const active: string[] = [];
  const lines: string[] = [];
  for (const t of md.parse(src, {})) {
    if (t.type === 'html_block') active.push(`html_block ${t.content}`);
    if (t.type !== 'inline') continue;
    let line = '';
    for (const c of t.children ?? []) {
      if (c.type === 'image' || c.type === 'link_open' || c.type === 'html_inline') active.push(`${c.type} ${c.content || c.attrGet('href') || c.attrGet('src')}`);
      if (c.type === 'text' || c.type === 'code_inline' || c.type === 'text_special') line += c.content;
      else if (c.type === 'softbreak' || c.type === 'hardbreak') {
        lines.push(line);
        line = '';
      }
    }
    lines.push(line);
  }
  return { active, lines };
}

/** Hostile strings a server could send: backtick runs of every length, edge backticks and spaces, line breaks, HTML, tables, entities. */
const HOSTILE = [
  'x`` ![p](https://evil.example/pixel.png) ``',
  '```` ![a](https://evil.example/a.png) `',
  '` lead and trail `',
  ' `` spaced ``` ',
  'two\n\n![n](https://evil.example/n.png)\r\n<img src=https://evil.example/i.png>',
  '<img src="https://evil.example/h.png">',
  'a|b [l](https://evil.example/l) **b** &lt;img src=x&gt; $x$ ~~s~~ <https://evil.example/auto>',
  'see https://evil.example/bare and //evil.example/proto and mail@evil.example',
  '# heading',
  '1. list',
];

/** What a reader should see: line breaks become one space (a code span or a report line holds none). */
const seen = (s: string) => s.replace(/[\r\n]+/g, ' ');

function assertLiteral(src: string, strings: string[], where: string): void {
  for (const md of [preview(), fuzzyPreview()]) {
    const r = render(md, src);
    assert.deepEqual(r.active, [], `${where}: no image, link or HTML from server strings`);
    const text = r.lines.join('\n');
    for (const s of strings) assert.ok(text.includes(seen(s).trim()), `${where}: shows ${JSON.stringify(s)} literally`);
  }
}

describe('Markdown text helpers', () => {
  it('codeSpan shows any string as itself, in one code span', () => {
    for (const s of [...HOSTILE, '`', '``', 'a', ' ', '   ']) {
      const r = render(preview(), `- ${codeSpan(s)}`);
      assert.deepEqual(r.active, []);
      assert.equal(r.lines.join(''), seen(s), JSON.stringify(s));
      const tokens = preview().parseInline(codeSpan(s), {})[0].children ?? [];
      assert.deepEqual(tokens.map((t) => t.type), ['code_inline'], JSON.stringify(s));
    }
  });

  it('markdownProse shows any string as itself, with no formatting', () => {
    for (const s of HOSTILE) {
      const r = render(preview(), `- Error: ${markdownProse(s)}`);
      assert.deepEqual(r.active, []);
      // A line's trailing spaces are never shown.
      assert.equal(r.lines.join(''), `Error: ${seen(s)}`.trimEnd(), JSON.stringify(s));
      const types = new Set(preview().parse(`- Error: ${markdownProse(s)}`, {}).flatMap((t) => [t.type, ...(t.children ?? []).map((c) => c.type)]));
      for (const t of ['em_open', 'strong_open', 's_open', 'heading_open', 'ordered_list_open', 'table_open']) assert.equal(types.has(t), false, `${t} in ${JSON.stringify(s)}`);
    }
  });
});

describe('Test Connection report: server strings stay literal', function () {
  this.timeout(15_000);
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('model ids, content type, finish reason and reply sample from a working server', async () => {
    const finish = 'x`` ![f](https://evil.example/f.png) ``';
    const reply = ' `` ![r](https://evil.example/r.png) <b>';
    const contentType = 'text/event-stream; x="`` ![c](https://evil.example/c.png) ``"';
    server = await startTestServer((req: RecordedRequest, res: ServerResponse) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: HOSTILE.map((id) => ({ id, object: 'model' })) }));
        return;
      }
      res.writeHead(200, { 'content-type': contentType });
      const chunk = (delta: object, finish_reason: string | null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] })}\n\n`;
      res.end(chunk({ role: 'assistant', content: reply }, null) + chunk({}, finish) + 'data: [DONE]\n\n');
    });
    const r = await diagnose({ endpoint: resolveEndpoint(server.origin), model: 'test-model', timeoutMs: 5_000 });
    assert.equal(r.ok, true, JSON.stringify(r.chat.error));
    assert.equal(r.chat.finishReason, finish);
    assert.equal(r.models.modelListed, false, 'so the closest listed names are quoted in a cause too');
    const md = reportMarkdown(r);
    assertLiteral(md, [...HOSTILE, finish, reply, contentType], 'report');
  });

  it('error messages from a failing server, in the fix, the reasons and the error line', async () => {
    const message = HOSTILE.join(' ');
    server = await startTestServer((req: RecordedRequest, res: ServerResponse) => {
      res.writeHead(req.method === 'GET' ? 403 : 400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
    });
    const r = await diagnose({ endpoint: resolveEndpoint(server.origin), model: HOSTILE[0], timeoutMs: 5_000 });
    assert.equal(r.ok, false);
    const md = reportMarkdown(r);
    assert.ok(md.includes('Error:'), md);
    assertLiteral(md, [...HOSTILE, HOSTILE[0]], 'report');
  });
});

describe('notifications: server words never become links', function () {
  this.timeout(15_000);
  // How VS Code's notifications find links in their text (LinkedText): [label](https:…|command:…|file:…).
  const NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;

  it('a model id that is a command link shows as text in the Test Connection headline', async () => {
    const hostile = ['x](command:workbench.action.closeWindow)', '[Open](command:workbench.action.quit)', '[pixel](https://evil.example/p)'];
    const server = await startTestServer((req: RecordedRequest, res: ServerResponse) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: hostile.map((id) => ({ id, object: 'model' })) }));
        return;
      }
      res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error [Fix it](command:workbench.action.quit)');
    });
    try {
      // "[Open" is the closest name to "[Ope": the fix quotes it, as the headline does.
      const r = await diagnose({ endpoint: resolveEndpoint(server.origin), model: '[Ope', timeoutMs: 5_000 });
      assert.equal(r.ok, false);
      const fix = r.causes[0]?.fix ?? '';
      assert.match(fix, /\[Open\]\(command:/, 'the fix quotes the hostile id (else this test proves nothing)');
      const headline = noticeText(`Parley: the connection fails. ${fix} ${r.chat.error?.message ?? ''}`);
      assert.deepEqual([...headline.matchAll(NOTIFICATION_LINK)].map((m) => m[0]), []);
      assert.ok(headline.includes('[Open] (command:workbench.action.quit)'), headline);
    } finally {
      await server.close();
    }
  });
});

describe('usage report and tooltip: model names stay literal', () => {
  it('in the tables and the tooltip', () => {
    const at = Date.UTC(2026, 10, 22, 12);
    let ledger = {};
    let last = recordFrom({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, { model: HOSTILE[0], host: 'h', durationMs: 1, source: 'chat', at });
    for (const model of HOSTILE) {
      last = recordFrom({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, { model, host: 'api.example.com', durationMs: 1, source: 'chat', at });
      ledger = addToLedger(ledger, last);
    }
    const report = usageReport(ledger, addTo(emptyTotals(), last), pricingOnly(), at);
    assertLiteral(report, HOSTILE, 'usage report');
    // Every model row is still one table row with seven cells.
    const tables = preview().parse(report, {});
    const firstTableRows = tables.findIndex((t) => t.type === 'tbody_close');
    assert.equal(tables.slice(0, firstTableRows).filter((t) => t.type === 'tr_open').length, HOSTILE.length + 1, 'a header and one row per model');
    assertLiteral(tooltipMarkdown(last, addTo(emptyTotals(), last), ledger), HOSTILE, 'tooltip');
  });
});
