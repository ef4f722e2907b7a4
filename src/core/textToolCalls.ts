// Tool calls a model wrote into its text instead of as tool_calls, read as real calls when tools were offered.
//
// The formats, as the servers' own parsers read them (Parley reads them only when the server did not):
// - Hermes 2 Pro / Qwen: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, after any text, one or more, the last
//   one possibly unclosed: vLLM's hermes_tool_parser.py (`<tool_call>(.*?)</tool_call>|<tool_call>(.*)`, the content
//   is the text before the first tag), llama.cpp's common/chat.cpp common_chat_parse_hermes_2_pro.
// - Llama 3.x: the whole reply is `{"name": …, "parameters": {…}}` (llama.cpp also allows `"type": "function",` first;
//   vLLM also `arguments`, a `<|python_tag|>` before it, and several objects joined by `;`): llama.cpp's
//   common_chat_parse_llama_3_1 and vLLM's llama_tool_parser.py (llama3_json).
// - Mistral: `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` before tokenizer v11, and `[TOOL_CALLS]name{…}` (with
//   `[ARGS]` between when special tokens are kept) from v11, after any text: vLLM's mistral_tool_parser.py, llama.cpp's
//   common_chat_parse_mistral_nemo.
// Written by hand: each format is a few lines, and no parser library reads them all.
import { isRecord } from './errors';
import type { ToolCall } from './types';

/** Tags that start a call after any text. */
const TAGS = ['<tool_call>', '[TOOL_CALLS]'];
/** Llama's tag before a call; only at the start of a reply. */
const PYTHON_TAG = '<|python_tag|>';
/** The start of a Llama call, as llama.cpp reads it, up to the end of the tool's name. */
const JSON_CALL = /^\{\s*(?:"type"\s*:\s*"function"\s*,\s*)?"name"\s*:\s*"([^"\\]*)"/;
/** The same starts with no spaces: a reply that is still a prefix of one of them may become a call. */
const JSON_STARTS = ['{"name":"', '{"type":"function","name":"'];

/**
 * The text of one reply, with any call written as text held back: the tags never reach the reader, even while they
 * stream. A reply that turns out to be no call (or calls a tool that was not offered) is let out as it was.
 */
export class TextCallFilter {
  private mode: 'start' | 'json' | 'text' | 'call' = 'start';
  private held = '';
  /** The text let out so far. */
  private shown = '';

  constructor(private readonly names: ReadonlySet<string>) {}

  /** Feeds answer text; returns what can be shown now. */
  feed(chunk: string): string {
    this.held += chunk;
    if (this.mode === 'call') return '';
    if (this.mode === 'start') {
      const lead = this.held.trimStart();
      if (!lead || (PYTHON_TAG.startsWith(lead) && lead !== PYTHON_TAG)) return '';
      this.mode = lead[0] === '{' || lead.startsWith(PYTHON_TAG) ? 'json' : 'text';
    }
    if (this.mode === 'json') {
      const lead = this.held.trimStart().replace(PYTHON_TAG, '').trimStart();
      const name = JSON_CALL.exec(lead)?.[1];
      if (name !== undefined && this.names.has(name)) this.mode = 'call';
      // Still a possible call while the start so far could become one (a name is at most a few dozen characters).
      const flat = lead.slice(0, 120).replace(/\s+/g, '');
      if (this.mode === 'call' || (name === undefined && JSON_STARTS.some((s) => s.startsWith(flat) || flat.startsWith(s)) && flat.length < 100)) return '';
      this.mode = 'text';
    }
    let out = '';
    for (;;) {
      const [at, length] = TAGS.map((t) => [this.held.indexOf(t), t.length]).filter(([i]) => i >= 0).sort((a, b) => a[0] - b[0])[0] ?? [];
      if (at === undefined) break;
      // A tag in a code block or a code span is shown, not run: the model is writing about the format.
      const before = this.shown + this.held.slice(0, at);
      if ((before.match(/```/g) ?? []).length % 2 === 0 && !before.endsWith('`')) {
        this.mode = 'call';
        return out + this.take(at);
      }
      out += this.take(at + length);
    }
    // Hold back what could be the start of a tag.
    let keep = 0;
    for (let k = Math.min(this.held.length, 11); k > 0 && !keep; k--) if (TAGS.some((t) => t.startsWith(this.held.slice(-k)))) keep = k;
    return out + this.take(this.held.length - keep);
  }

  /** At the end of the reply: the calls it wrote (when `calls` allows them), or else the text still held. */
  end(calls: boolean): { text: string; calls: ToolCall[] } {
    const found = calls && this.mode === 'call' ? parseTextToolCalls(this.held, this.names) : undefined;
    const text = found ? '' : this.held;
    this.held = '';
    this.mode = 'text';
    return { text, calls: found ?? [] };
  }

  private take(n: number): string {
    const out = this.held.slice(0, n);
    this.held = this.held.slice(n);
    this.shown += out;
    return out;
  }
}

/** One call from a parsed object, or undefined unless it names an offered tool with an object for its arguments. */
function toCall(v: unknown, names: ReadonlySet<string>, bare: boolean): ToolCall | undefined {
  if (!isRecord(v) || typeof v.name !== 'string' || !names.has(v.name)) return undefined;
  // A bare JSON reply is a call only when it holds nothing else: a JSON answer may well have a "name".
  if (bare && (Object.keys(v).some((k) => !['name', 'parameters', 'arguments', 'type'].includes(k)) || (v.type ?? 'function') !== 'function')) return undefined;
  const given: unknown = v.arguments ?? v.parameters ?? {};
  const args = typeof given === 'string' ? json(given) : given;
  return isRecord(args) ? { id: '', type: 'function', function: { name: v.name, arguments: JSON.stringify(args) } } : undefined;
}

function json(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/**
 * The calls in `text` (which starts at a call: a tag, or Llama's JSON), or undefined when it is not one, or names a
 * tool not in `names`: then it is text, and nothing runs. Text after Hermes calls is dropped, as vLLM does.
 */
export function parseTextToolCalls(text: string, names: ReadonlySet<string>): ToolCall[] | undefined {
  const s = text.trim();
  let found: unknown[];
  let bare = false;
  if (s.startsWith('<tool_call>')) {
    found = [...s.matchAll(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g)].map((m) => json(m[1].trim()));
  } else if (s.startsWith('[TOOL_CALLS]')) {
    const rest = s.slice(12).trim();
    const list = rest.startsWith('[') ? json(rest) : undefined;
    found = Array.isArray(list)
      ? list
      : s.split('[TOOL_CALLS]').slice(1).map((part) => {
        const m = /^\s*([^\s[{]+)\s*(?:\[ARGS\])?\s*(\{[\s\S]*\})\s*$/.exec(part);
        return m ? { name: m[1], arguments: json(m[2]) } : undefined;
      });
  } else {
    bare = true;
    const body = s.replace(PYTHON_TAG, '').trim();
    const whole = json(body);
    found = whole !== undefined ? [whole] : body.split(/;\s*(?=\{)/).map(json);
  }
  const calls = found.map((v) => toCall(v, names, bare));
  return calls.length > 0 && calls.every((c) => c !== undefined) ? (calls as ToolCall[]) : undefined;
}
