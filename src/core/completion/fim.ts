// Fill-in-the-middle prompts in each model family's own tokens, for servers that take only a prompt (route 4).
//
// The tokens and their order are each family's published format: Qwen2.5-Coder's README ("fill in the middle"),
// StarCoder2's and CodeGemma's model cards, CodeLlama's paper (`<PRE> … <SUF>… <MID>`, with its spaces), the
// DeepSeek-Coder README (full-width bars, `▁`), and Mistral's Codestral (suffix first: `[SUFFIX]…[PREFIX]…`).

/** A model family whose FIM tokens Parley knows. */
export type FimFamily = 'qwen' | 'starcoder' | 'codellama' | 'deepseek' | 'codestral' | 'codegemma';

/** Every family, for the override setting and its checks. */
export const FIM_FAMILIES: readonly FimFamily[] = ['qwen', 'starcoder', 'codellama', 'deepseek', 'codestral', 'codegemma'];

/** A chunk of another file, sent along as context. */
export interface FimExtra {
  /** The path shown to the model (workspace-relative). */
  filename: string;
  text: string;
}

interface FimTemplate {
  /** The prompt; `file` is the current file's path, `extras` other files' chunks (families with file separators use them). */
  prompt(prefix: string, suffix: string, file: string, extras: readonly FimExtra[]): string;
  /** Tokens that end the middle: the server should stop there, and Parley cuts any that still come. */
  stop: string[];
}

/** Qwen's and StarCoder2's repository format: each file after a separator with its path, the current one last. */
function repoPrompt(sep: string, pre: string, suf: string, mid: string) {
  return (prefix: string, suffix: string, file: string, extras: readonly FimExtra[]) =>
    (extras.length ? extras.map((e) => `${sep}${e.filename}\n${e.text}\n`).join('') + `${sep}${file}\n` : '') + `${pre}${prefix}${suf}${suffix}${mid}`;
}

const TEMPLATES: Record<FimFamily, FimTemplate> = {
  qwen: {
    prompt: repoPrompt('<|file_sep|>', '<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>'),
    stop: ['<|endoftext|>', '<|file_sep|>', '<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|fim_pad|>', '<|repo_name|>', '<|im_start|>', '<|im_end|>'],
  },
  starcoder: {
    prompt: repoPrompt('<file_sep>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>'),
    stop: ['<|endoftext|>', '<file_sep>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<repo_name>'],
  },
  codellama: {
    prompt: (prefix, suffix) => `<PRE> ${prefix} <SUF>${suffix} <MID>`,
    stop: ['<EOT>', '<PRE>', '<SUF>', '<MID>'],
  },
  deepseek: {
    prompt: (prefix, suffix) => `<｜fim▁begin｜>${prefix}<｜fim▁hole｜>${suffix}<｜fim▁end｜>`,
    stop: ['<｜end▁of▁sentence｜>', '<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>', '<|EOT|>'],
  },
  codestral: {
    prompt: (prefix, suffix) => `[SUFFIX]${suffix}[PREFIX]${prefix}`,
    stop: ['</s>', '[PREFIX]', '[SUFFIX]', '[MIDDLE]'],
  },
  codegemma: {
    prompt: (prefix, suffix) => `<|fim_prefix|>${prefix}<|fim_suffix|>${suffix}<|fim_middle|>`,
    stop: ['<|file_separator|>', '<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<end_of_turn>', '<eos>'],
  },
};

/** Which family a model id belongs to, from its name (`qwen2.5-coder:1.5b`, `bigcode/starcoder2-3b`…); undefined when none. */
export function fimFamilyOf(model: string): FimFamily | undefined {
  const m = model.toLowerCase();
  if (/codegemma/.test(m)) return 'codegemma';
  if (/codestral/.test(m)) return 'codestral';
  if (/deepseek[-_.]?coder/.test(m)) return 'deepseek';
  if (/code[-_.]?llama/.test(m)) return 'codellama';
  if (/starcoder|stable[-_.]?code/.test(m)) return 'starcoder';
  if (/qwen[\d.]*[-_.]?coder/.test(m)) return 'qwen';
  return undefined;
}

/** The family to use: the override (`parley.completion.fimTokens`) unless it is `auto`, else the one the model id names. */
export function chooseFimFamily(model: string, override: string | undefined): FimFamily | undefined {
  return override && (FIM_FAMILIES as readonly string[]).includes(override) ? (override as FimFamily) : fimFamilyOf(model);
}

/** The prompt for `family`, with other files' chunks where its format has a place for them. */
export function fimPrompt(family: FimFamily, prefix: string, suffix: string, file: string, extras: readonly FimExtra[]): string {
  return TEMPLATES[family].prompt(prefix, suffix, file, extras);
}

/** The family's end tokens. */
export function fimStops(family: FimFamily): string[] {
  return TEMPLATES[family].stop;
}

/**
 * Every family's special tokens that no source code holds (those with `|`, `｜`, `<fim_`, `<file_sep>`), so that one a
 * server let through on any route is cut off the completion. `</s>`, `<PRE>` and `[PREFIX]` are left out: HTML and
 * code have them.
 */
export const ALL_FIM_TOKENS: readonly string[] = [...new Set(FIM_FAMILIES.flatMap((f) => TEMPLATES[f].stop))]
  .filter((t) => /[|｜]|^<fim_|^<file_sep>|^<repo_name>/.test(t));
