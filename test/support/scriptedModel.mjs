// Tiny GGUF models whose replies follow a script, for a real llama.cpp `llama-server` in the tests (no download).
//
// The model is a one-layer `llama` whose MLP weights are zero. Each piece of each scripted reply is a token of its
// own, and each token's embedding is the ±1 code of the token that must follow it; the output head scores every
// token by its own code, so the next token is the scripted one by a margin of tens of logits, greedy or sampled.
//
// Which script runs is decided by the chat template: Qwen3's ChatML template (tool calls as
// <tool_call>{"name": …, "arguments": …}</tool_call>, reasoning as <think>…</think>, which llama.cpp's template
// analysis recognises) whose generation prompt ends with a control token naming the script, chosen from the last
// message: a tool result runs `afterToolScript`; a user message containing a script's `trigger` runs that script;
// anything else runs `defaultScript`. llama.cpp's WordPiece tokenizer always appends a [SEP] token after that
// selector, so the one attention head carries the selector over: [SEP]'s query matches the key of selector tokens
// only (in the slowest RoPE pair, which barely turns), and the selector's value, its code, becomes [SEP]'s. Every
// other query is zero, and the attention's output is scaled down so that it never outweighs a token's own code.
//
// The vocabulary is a WordPiece one (llama.cpp's `bert` tokenizer) in which no ordinary word is known: every word
// and every punctuation mark of a prompt counts one token (an [UNK]), whitespace none. That counts English at about
// 4.7 characters a token and JSON at about 3, close to real chat models' tokenizers, with a vocabulary of a few
// dozen entries and a file of a few tens of KB.
//
// With `fim`, the vocabulary also has Qwen2.5-Coder's six fill-in-the-middle tokens, named in the metadata as a
// converted coder model names them, so llama-server answers /infill (it refuses a model without the first three with
// 501). Its infill prompt ends with <|fim_middle|>, whose code starts the `fim` reply; /v1/completions appends [SEP]
// after a prompt written in those tokens, so <|fim_middle|> is also a key the attention carries over, like a selector.
import { writeFileSync } from 'node:fs';
import { GGUF_TYPE, encodeGguf } from './gguf.mjs';

/** @typedef {{ name: string, trigger?: string, reply: string | string[], loop?: string | string[] }} Script */

/**
 * The scripts every model has unless told otherwise. `plain` is the default, `answer` follows a tool result, the
 * others run when the user's last message contains their trigger.
 * @type {readonly Script[]}
 */
export const DEFAULT_SCRIPTS = Object.freeze([
  { name: 'plain', reply: 'Hello from the tiny model. It answers every question the same way.' },
  { name: 'think', trigger: '#think', reply: '<think>\nThe user asks for 2 + 2. That is 4.\n</think>\n\nThe answer is 4.' },
  // With tools offered llama.cpp holds a call to them by a grammar: offer a read_file that takes a path, or the
  // server answers 500 ("Unexpected empty grammar stack…"). Without tools the call stays text in the content.
  { name: 'tool', trigger: '#tool', reply: '<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>' },
  { name: 'answer', reply: 'The tool answered. That is all I needed.' },
  { name: 'json', trigger: '#json', reply: '{"answer": 4, "unit": "apples", "sure": true}' },
  // Never ends: after "Counting:" the pair " tick", " tock" repeats until the window or max_tokens stops it.
  { name: 'forever', trigger: '#forever', reply: 'Counting:', loop: ' tick tock' },
]);

/** Logit scale of the output head: the scripted next token wins by about 70 logits (see the margins below). */
const SCALE = 40;
/** Length of the ±1 codes: enough for 65,535 tokens that follow others. */
const CODE = 16;
/** The residual stream: the code, then a flag on [SEP] (the query) and one on selectors (the key). */
const N_EMBD = 32;
const QUERY_FLAG = CODE;
const KEY_FLAG = CODE + 1;
/**
 * [SEP]'s flag is small so that, after the final RMS norm, the code the attention brought dominates its residual;
 * the attention's own RMS norm scales it back up (hence the tiny epsilon).
 */
const QUERY_FLAG_VALUE = 0.01;
const RMS_EPS = 1e-10;
/** One head of CODE dimensions; q and k live in its last RoPE pair, whose angle stays below 1e-4 over 1e6 positions. */
const HEAD = CODE;
const ROPE_BASE = 1e12;
const QK_DIM = HEAD - 2;
/** q·k/√HEAD between [SEP] and a selector comes to about 60 logits, so [SEP] attends to the selector alone. */
const QK_WEIGHT = 5.6;
/**
 * Attention output scale. A query of zero averages the values of the context (entries up to √2), so its output
 * moves a token's residual by at most ATTN_OUT·√2 per dimension; below 1/(√2·CODE) the token's own code still wins.
 */
const ATTN_OUT = 1 / 64;
const N_FF = 8;

const TOKEN_TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3 };
/**
 * Qwen2.5-Coder's FIM tokens with the metadata key llama.cpp reads each from (src/llama-arch.cpp,
 * LLM_KV_TOKENIZER_FIM_*_ID); llama-vocab.cpp makes the last three end-of-generation tokens.
 */
const FIM_TOKENS = Object.freeze([
  ['tokenizer.ggml.fim_pre_token_id', '<|fim_prefix|>'],
  ['tokenizer.ggml.fim_suf_token_id', '<|fim_suffix|>'],
  ['tokenizer.ggml.fim_mid_token_id', '<|fim_middle|>'],
  ['tokenizer.ggml.fim_pad_token_id', '<|fim_pad|>'],
  ['tokenizer.ggml.fim_rep_token_id', '<|repo_name|>'],
  ['tokenizer.ggml.fim_sep_token_id', '<|file_sep|>'],
]);
/** The FIM token after which the `fim` reply comes. */
export const FIM_MIDDLE = '<|fim_middle|>';
/** Markers a reply keeps whole, so llama.cpp's parsers and grammar triggers see them as written. */
const MARKERS = /(<\/?think>|<\/?tool_call>)/;

/**
 * Splits a reply into pieces: the markers, then runs of words with their leading space, of punctuation, of
 * newlines. Each becomes one token of the output.
 */
function splitReply(text) {
  return text.split(MARKERS).flatMap((part, i) => (i % 2 ? [part] : part.match(/\n+|[^\S\n]*[\p{L}\p{N}_]+|[^\S\n]*[^\s\p{L}\p{N}_]+|[^\S\n]+/gu) ?? []));
}

/**
 * Turns a script's pieces into tokens that no other script uses: a token has one successor, so a piece that is
 * already taken is joined to the next one (or, at the end, to the one before).
 */
function claimPieces(pieces, taken, what) {
  const out = [];
  let pending = '';
  for (const p of pieces) {
    pending += p;
    if (!taken.has(pending)) {
      out.push(pending);
      taken.add(pending);
      pending = '';
    }
  }
  if (pending) {
    const last = out.pop();
    if (last === undefined) throw new Error(`scripted model: ${what} repeats a reply of another script; reword it`);
    taken.delete(last);
    const joined = last + pending;
    if (taken.has(joined)) throw new Error(`scripted model: ${what} cannot be made of unique pieces; reword it`);
    out.push(joined);
    taken.add(joined);
  }
  return out;
}

/** A Jinja string literal. */
const jinjaString = (s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The control token that ends the generation prompt and starts `script`. */
export const selectorToken = (script) => `<|script:${script}|>`;

/**
 * Qwen3's chat template (llama.cpp's models/templates/Qwen-Qwen3-0.6B.jinja) with the generation prompt ending in
 * the selector of the script to run; without Qwen3's enable_thinking switch, whose empty think block would stand
 * between the selector and the reply.
 */
function chatTemplate(scripts, defaultScript, afterToolScript) {
  const triggered = scripts.filter((s) => s.trigger);
  const triggers = triggered.length
    ? `${triggered.map((s, i) => `        {%- ${i ? 'elif' : 'if'} ${jinjaString(s.trigger)} in sel.text %}{%- set sel.script = ${jinjaString(s.name)} %}\n`).join('')}        {%- endif %}\n`
    : '';
  return `{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\\n\\n' }}
    {%- endif %}
    {{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {%- set content = message.content %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is defined and message.reasoning_content is not none %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- else %}
            {%- if '</think>' in message.content %}
                {%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}
                {%- set reasoning_content = message.content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}
            {%- endif %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {%- set sel = namespace(script=${jinjaString(defaultScript)}, text='') %}
    {%- if messages[-1].role == 'tool' %}
        {%- set sel.script = ${jinjaString(afterToolScript)} %}
    {%- elif messages[-1].role == 'user' and messages[-1].content is string %}
        {%- set sel.text = messages[-1].content %}
${triggers}    {%- endif %}
    {{- '<|im_start|>assistant\\n<|script:' + sel.script + '|>' }}
{%- endif %}`;
}

/** The ±1 code of token `i`: the bits of i + 1, so distinct tokens have distinct codes. */
function code(i) {
  const c = new Float32Array(CODE);
  for (let b = 0; b < CODE; b++) c[b] = ((i + 1) >> b) & 1 ? 1 : -1;
  return c;
}

/**
 * Builds a scripted model: its GGUF bytes and what a test needs to know about it.
 * @param {object} [options]
 * @param {readonly Script[]} [options.scripts]  default DEFAULT_SCRIPTS
 * @param {string} [options.defaultScript]       default 'plain'
 * @param {string} [options.afterToolScript]     default 'answer'
 * @param {number} [options.contextLength]       the training window the file states (n_ctx_train), default 32768
 * @param {string} [options.name]                general.name, default 'parley-tiny'
 * @param {string | string[]} [options.fim]      the reply to a fill-in-the-middle prompt; with it the model has FIM tokens
 */
export function buildScriptedModel({ scripts = DEFAULT_SCRIPTS, defaultScript = 'plain', afterToolScript = 'answer', contextLength = 32768, name = 'parley-tiny', fim } = {}) {
  const names = new Set(scripts.map((s) => s.name));
  if (names.size !== scripts.length) throw new Error('scripted model: two scripts have the same name');
  for (const n of [defaultScript, afterToolScript]) if (!names.has(n)) throw new Error(`scripted model: no script named ${n}`);
  for (const s of scripts) if (!/^[\w-]+$/.test(s.name)) throw new Error(`scripted model: script name ${JSON.stringify(s.name)} must be letters, digits, _ or -`);

  const selectors = scripts.map((s) => selectorToken(s.name));
  const fimTokens = fim === undefined ? [] : FIM_TOKENS.map(([, text]) => text);
  const specials = ['<|endoftext|>', '[SEP]', '<|im_start|>', '<|im_end|>', ...selectors, ...fimTokens];
  const texts = ['[UNK]', ...specials];
  const types = [TOKEN_TYPE.UNKNOWN, ...specials.map(() => TOKEN_TYPE.CONTROL)];
  const id = new Map(texts.map((t, i) => [t, i]));
  const taken = new Set(texts);
  /** token id -> the token id that must follow it */
  const next = new Map();
  const tokenOf = (piece) => {
    if (!id.has(piece)) {
      id.set(piece, texts.length);
      texts.push(piece);
      types.push(TOKEN_TYPE.NORMAL);
    }
    return id.get(piece);
  };
  const eos = id.get('<|im_end|>');
  const pieces = (v) => (v === undefined ? [] : Array.isArray(v) ? v : splitReply(v));
  /** Chains `start` to the reply's tokens (then to the loop's, or to the end); returns what the chain replies. */
  const chainFrom = (start, reply, loop, what) => {
    if (!reply.length && !loop.length) throw new Error(`scripted model: ${what} has no reply`);
    const chain = [start, ...reply, ...loop];
    for (let i = 0; i + 1 < chain.length; i++) next.set(chain[i], chain[i + 1]);
    next.set(chain[chain.length - 1], loop.length ? loop[0] : eos);
    return { text: reply.map((t) => texts[t]).join(''), loop: loop.map((t) => texts[t]).join(''), pieces: [...reply, ...loop].map((t) => texts[t]) };
  };
  const expected = {};
  for (const s of scripts) {
    const reply = claimPieces(pieces(s.reply), taken, `script ${s.name}`).map(tokenOf);
    const loop = claimPieces(pieces(s.loop), taken, `the loop of script ${s.name}`).map(tokenOf);
    expected[s.name] = chainFrom(id.get(selectorToken(s.name)), reply, loop, `script ${s.name}`);
  }
  const fimReply = fim === undefined ? undefined : chainFrom(id.get(FIM_MIDDLE), claimPieces(pieces(fim), taken, 'the fim reply').map(tokenOf), [], 'the fim reply');

  const nVocab = texts.length;
  const embd = new Float32Array(N_EMBD * nVocab);
  const output = new Float32Array(N_EMBD * nVocab);
  for (const [from, to] of next) embd.set(code(to), from * N_EMBD);
  for (const t of new Set(next.values())) output.set(code(t).map((x) => x * SCALE), t * N_EMBD);
  embd[id.get('[SEP]') * N_EMBD + QUERY_FLAG] = QUERY_FLAG_VALUE;
  for (const sel of fim === undefined ? selectors : [...selectors, FIM_MIDDLE]) embd[id.get(sel) * N_EMBD + KEY_FLAG] = 1;
  // Weights are [inputs, outputs] with the inputs of one output contiguous, as ggml lays out {ne0, ne1}.
  const wq = new Float32Array(N_EMBD * HEAD);
  const wk = new Float32Array(N_EMBD * HEAD);
  const wv = new Float32Array(N_EMBD * HEAD);
  const wo = new Float32Array(HEAD * N_EMBD);
  wq[QK_DIM * N_EMBD + QUERY_FLAG] = QK_WEIGHT;
  wk[QK_DIM * N_EMBD + KEY_FLAG] = QK_WEIGHT;
  for (let j = 0; j < CODE; j++) {
    wv[j * N_EMBD + j] = 1;
    wo[j * HEAD + j] = ATTN_OUT;
  }
  const ones = new Float32Array(N_EMBD).fill(1);
  const zeros = (n) => new Float32Array(n);

  const u32 = GGUF_TYPE.UINT32;
  const metadata = [
    ['general.architecture', GGUF_TYPE.STRING, 'llama'],
    ['general.name', GGUF_TYPE.STRING, name],
    ['general.alignment', u32, 32],
    ['llama.context_length', u32, contextLength],
    ['llama.embedding_length', u32, N_EMBD],
    ['llama.block_count', u32, 1],
    ['llama.feed_forward_length', u32, N_FF],
    ['llama.attention.head_count', u32, 1],
    ['llama.attention.head_count_kv', u32, 1],
    ['llama.attention.key_length', u32, HEAD],
    ['llama.attention.value_length', u32, HEAD],
    ['llama.rope.dimension_count', u32, HEAD],
    ['llama.rope.freq_base', GGUF_TYPE.FLOAT32, ROPE_BASE],
    ['llama.attention.layer_norm_rms_epsilon', GGUF_TYPE.FLOAT32, RMS_EPS],
    ['llama.vocab_size', u32, nVocab],
    ['tokenizer.ggml.model', GGUF_TYPE.STRING, 'bert'],
    // llama.cpp's WordPiece writes a space as U+2581 in a token's text and shows it back as a space.
    ['tokenizer.ggml.tokens', GGUF_TYPE.ARRAY, { type: GGUF_TYPE.STRING, values: texts.map((t) => t.replace(/ /g, '\u2581')) }],
    ['tokenizer.ggml.token_type', GGUF_TYPE.ARRAY, { type: GGUF_TYPE.INT32, values: types }],
    ['tokenizer.ggml.normalizer.lowercase', GGUF_TYPE.BOOL, false],
    ['tokenizer.ggml.add_bos_token', GGUF_TYPE.BOOL, false],
    ['tokenizer.ggml.add_eos_token', GGUF_TYPE.BOOL, false],
    ['tokenizer.ggml.add_sep_token', GGUF_TYPE.BOOL, false],
    // WordPiece's default ids (BERT's 100 to 103) would name tokens of ours: every special id is set.
    ['tokenizer.ggml.unknown_token_id', u32, id.get('[UNK]')],
    ['tokenizer.ggml.bos_token_id', u32, id.get('<|endoftext|>')],
    ['tokenizer.ggml.eos_token_id', u32, eos],
    ['tokenizer.ggml.seperator_token_id', u32, id.get('[SEP]')],
    ['tokenizer.ggml.padding_token_id', u32, id.get('<|endoftext|>')],
    ['tokenizer.ggml.mask_token_id', u32, id.get('<|endoftext|>')],
    ['tokenizer.chat_template', GGUF_TYPE.STRING, chatTemplate(scripts, defaultScript, afterToolScript)],
    ...(fim === undefined ? [] : FIM_TOKENS.map(([key, text]) => [key, u32, id.get(text)])),
  ];
  const tensors = [
    { name: 'token_embd.weight', dims: [N_EMBD, nVocab], data: embd },
    { name: 'output_norm.weight', dims: [N_EMBD], data: ones },
    { name: 'output.weight', dims: [N_EMBD, nVocab], data: output },
    { name: 'blk.0.attn_norm.weight', dims: [N_EMBD], data: ones },
    { name: 'blk.0.attn_q.weight', dims: [N_EMBD, HEAD], data: wq },
    { name: 'blk.0.attn_k.weight', dims: [N_EMBD, HEAD], data: wk },
    { name: 'blk.0.attn_v.weight', dims: [N_EMBD, HEAD], data: wv },
    { name: 'blk.0.attn_output.weight', dims: [HEAD, N_EMBD], data: wo },
    { name: 'blk.0.ffn_norm.weight', dims: [N_EMBD], data: ones },
    { name: 'blk.0.ffn_gate.weight', dims: [N_EMBD, N_FF], data: zeros(N_EMBD * N_FF) },
    { name: 'blk.0.ffn_up.weight', dims: [N_EMBD, N_FF], data: zeros(N_EMBD * N_FF) },
    { name: 'blk.0.ffn_down.weight', dims: [N_FF, N_EMBD], data: zeros(N_FF * N_EMBD) },
  ];
  return { bytes: encodeGguf({ metadata, tensors }), expected, fim: fimReply, vocabSize: nVocab, contextLength };
}

/**
 * Writes a scripted model to `file` (see buildScriptedModel for the options) and returns what its scripts reply:
 * `expected[name].text` is the reply of a script that ends, `expected[name].loop` the part a never-ending one repeats;
 * `fim.text` the reply to a fill-in-the-middle prompt (with the `fim` option).
 */
export function writeScriptedModel(file, options) {
  const { bytes, ...rest } = buildScriptedModel(options);
  writeFileSync(file, bytes);
  return { file, size: bytes.length, ...rest };
}
