// Prompt files (`.github/prompts/*.prompt.md`), the pure part: front matter, `/name` arguments, variables filled in,
// the files the body mentions, and the front matter keys Parley has nothing for.

/** A prompt file read: its `/name`, its front matter and its body (the user's message once filled in). */
export interface PromptFile {
  name: string;
  description: string;
  /** `argument-hint`: what to type after `/name`. */
  hint: string;
  /** The model the request uses, when the front matter names one. */
  model?: string;
  /** The tools the request may offer (by name), when the front matter limits them. */
  tools?: string[];
  /** Front matter keys Parley does not honour (`mode`, `agent`, …), in the order written. */
  ignored: string[];
  body: string;
}

/** One `${input:name}` or `${input:name:placeholder}` of a body. */
export interface PromptInput {
  name: string;
  placeholder: string;
}

/** The keys Parley honours; any other is reported as ignored. */
const KNOWN_KEYS = ['name', 'description', 'argument-hint', 'model', 'tools'];

/** A value as written: quotes taken off; a flow list `[a, 'b']` as its items. */
function yamlValue(raw: string): string | string[] {
  const v = raw.trim();
  if (v.startsWith('[') && v.endsWith(']')) return v.slice(1, -1).split(',').map((x) => unquote(x)).filter((x) => x !== '');
  return unquote(v);
}

function unquote(raw: string): string {
  const v = raw.trim();
  return /^(['"]).*\1$/s.test(v) ? v.slice(1, -1) : v;
}

/**
 * The front matter of `text` as flat keys (`key: value`, a flow list, or a block list of `- item` lines) and the
 * body after it. Written by hand: prompt files use these few forms, and a YAML library would cost bundle size.
 */
export function splitFrontMatter(text: string): { fields: Map<string, string | string[]>; body: string } {
  const fields = new Map<string, string | string[]>();
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) return { fields, body: text.replace(/^\uFEFF/, '') };
  let last: string | undefined;
  for (const line of m[1].split(/\r?\n/)) {
    const item = /^\s+-\s*(.*)$/.exec(line);
    if (item && last) {
      const had = fields.get(last);
      fields.set(last, [...(Array.isArray(had) ? had : []), unquote(item[1])]);
      continue;
    }
    const kv = /^([A-Za-z][\w-]*)\s*:(.*)$/.exec(line);
    if (!kv) continue;
    last = kv[1];
    fields.set(last, kv[2].trim() ? yamlValue(kv[2]) : []);
  }
  return { fields, body: text.slice(m[0].length) };
}

/** A prompt file's `/name`: its file name without `.prompt.md`. */
export function promptName(fileName: string): string {
  return fileName.replace(/^.*[/\\]/, '').replace(/\.prompt\.md$/i, '');
}

/** Reads a prompt file's text: its `/name` is its front matter's `name`, else its file name (`fileName`). */
export function parsePromptFile(fileName: string, text: string): PromptFile {
  const { fields, body } = splitFrontMatter(text);
  const str = (k: string) => {
    const v = fields.get(k);
    return typeof v === 'string' && v ? v : undefined;
  };
  const tools = fields.get('tools');
  return {
    name: (str('name') ?? promptName(fileName)).replace(/\s+/g, '-'),
    description: str('description') ?? '',
    hint: str('argument-hint') ?? '',
    ...(str('model') ? { model: str('model') } : {}),
    ...(tools !== undefined ? { tools: typeof tools === 'string' ? [tools] : tools } : {}),
    ignored: [...fields.keys()].filter((k) => !KNOWN_KEYS.includes(k)),
    body,
  };
}

const INPUT = /\$\{input:([\w-]+)(?::([^}]*))?\}/g;

/** The `${input:…}` arguments a body asks for, each once, in the order first written. */
export function promptInputs(body: string): PromptInput[] {
  const out: PromptInput[] = [];
  for (const m of body.matchAll(INPUT)) {
    if (!out.some((i) => i.name === m[1])) out.push({ name: m[1], placeholder: m[2] ?? '' });
  }
  return out;
}

/**
 * The arguments typed after `/name`: `key=value` pairs (a value with spaces in quotes); when the body asks for one
 * input and none is written as a pair, the whole text is that input.
 */
export function parseArguments(args: string, inputs: readonly PromptInput[]): Map<string, string> {
  const out = new Map<string, string>();
  const pair = /([\w-]+)=(?:"([^"]*)"|'([^']*)'|(\S*))/g;
  for (const m of args.matchAll(pair)) {
    if (inputs.some((i) => i.name === m[1])) out.set(m[1], m[2] ?? m[3] ?? m[4] ?? '');
  }
  if (out.size === 0 && inputs.length === 1 && args.trim()) out.set(inputs[0].name, args.trim());
  return out;
}

/** What the editor gives the variables: the selected text and the active file's workspace path (when there is one). */
export interface PromptEditor {
  selection?: string;
  file?: string;
}

/**
 * The body with its variables filled in: each `${input:…}` from `values`, `${selection}` and `${file}` from the
 * editor. Returns the inputs still missing instead, when any is (nothing is sent then).
 */
export function fillPrompt(body: string, values: ReadonlyMap<string, string>, editor: PromptEditor): { text: string } | { missing: PromptInput[] } {
  const missing = promptInputs(body).filter((i) => !values.get(i.name));
  if (missing.length) return { missing };
  const text = body
    .replace(INPUT, (_, name: string) => values.get(name) ?? '')
    .replace(/\$\{selection\}/g, () => editor.selection ?? '')
    .replace(/\$\{file\}/g, () => editor.file ?? '');
  return { text };
}

/** The words that ask for missing inputs: `/name` needs each, and how to give them. */
export function missingWords(name: string, missing: readonly PromptInput[]): string {
  const list = missing.map((i) => (i.placeholder ? `${i.name} (${i.placeholder})` : i.name)).join(', ');
  const example = missing.length === 1 ? `/${name} <${missing[0].name}>` : `/${name} ${missing.map((i) => `${i.name}=…`).join(' ')}`;
  return `/${name} needs ${list}: type ${example} and send again.`;
}

/**
 * The workspace files a body mentions, each once: `#file:path` (VS Code's prompt files) and `@path` where the path
 * has a folder or an extension (so `@someone` in prose is not a file). Markdown links are not read.
 */
export function promptMentions(body: string): string[] {
  const out: string[] = [];
  for (const m of body.matchAll(/(?:^|[\s(])(?:#file:|@)([^\s`'"()<>\]]*[\w/][^\s`'"()<>\]]*)/g)) {
    const path = m[1].replace(/[.,;:!?]+$/, '');
    const isFile = m[0].includes('#file:') || /[/.]/.test(path);
    if (isFile && !['selection', 'problems', 'open'].includes(path) && !out.includes(path)) out.push(path);
  }
  return out;
}

/** The words for a prompt file's front matter keys Parley ignores, or undefined when there are none. */
export function ignoredWords(p: PromptFile, unknownTools: readonly string[]): string | undefined {
  const parts: string[] = [];
  if (p.ignored.length) parts.push(`${p.ignored.join(', ')} (Parley has nothing for ${p.ignored.length === 1 ? 'it' : 'them'})`);
  if (unknownTools.length) parts.push(`the tools ${unknownTools.join(', ')} (Parley has no tool of that name)`);
  return parts.length ? `Prompt file /${p.name}: ignored ${parts.join('; ')}.` : undefined;
}

/**
 * The workspace path of a file a prompt file mentions: `./…` and `../…` from the prompt file's folder (`promptDir`,
 * a workspace path; '' for a user prompt), anything else from the workspace's root. A path that climbs above the root
 * is left climbing, for the workspace gate to refuse.
 */
export function mentionPath(promptDir: string, path: string): string {
  if (!/^\.\.?\//.test(path)) return path;
  const out = promptDir.split('/').filter(Boolean);
  for (const part of path.split('/')) {
    if (part === '..') {
      if (out.length && out[out.length - 1] !== '..') out.pop();
      else out.push('..');
    } else if (part && part !== '.') out.push(part);
  }
  return out.join('/');
}
