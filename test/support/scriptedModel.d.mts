// Types for scriptedModel.mjs.

/** One scripted reply. `trigger`: a text in the user's last message that selects it; `loop`: repeated forever after `reply`. */
export interface Script {
  name: string;
  trigger?: string;
  reply: string | string[];
  loop?: string | string[];
}

export interface ScriptedModelOptions {
  /** Default DEFAULT_SCRIPTS. */
  scripts?: readonly Script[];
  /** Default 'plain'. */
  defaultScript?: string;
  /** The script that answers a tool result; default 'answer'. */
  afterToolScript?: string;
  /** n_ctx_train, the window the file states; default 32768. */
  contextLength?: number;
  /** general.name; default 'parley-tiny'. */
  name?: string;
  /** The reply to a fill-in-the-middle prompt; with it the vocabulary has Qwen2.5-Coder's FIM tokens and llama-server answers /infill. */
  fim?: string | string[];
}

export interface ScriptedReply {
  /** The reply of a script that ends (for a never-ending one, the part before the loop). */
  text: string;
  /** The part a never-ending script repeats; '' for one that ends. */
  loop: string;
  /** The reply's tokens as they stream, one delta each. */
  pieces: string[];
}

export const DEFAULT_SCRIPTS: readonly Script[];
/** The FIM token after which the `fim` reply comes. */
export const FIM_MIDDLE: string;
export function selectorToken(script: string): string;
export function buildScriptedModel(options?: ScriptedModelOptions): { bytes: Buffer; expected: Record<string, ScriptedReply>; fim?: ScriptedReply; vocabSize: number; contextLength: number };
/** Writes the model to `file`; `expected[name]` is what each script replies, `fim` what a fill-in-the-middle prompt gets. */
export function writeScriptedModel(file: string, options?: ScriptedModelOptions): { file: string; size: number; expected: Record<string, ScriptedReply>; fim?: ScriptedReply; vocabSize: number; contextLength: number };
