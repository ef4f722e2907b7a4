// Types for llama-server.mjs.

export const LLAMA_VERSION: Readonly<{ nodeLlamaCpp: string }>;
export const CMAKE_OPTIONS: readonly string[];
export const llamaPaths: Readonly<{ dir: string; binary: string; stamp: string }>;

/** Builds the pinned llama-server when missing (minutes) and returns its path; PARLEY_LLAMA_SERVER overrides. */
export function ensureLlamaServer(): string;
/** The last build's stamp: versions, commit, cmake options, build time. */
export function llamaServerInfo(): { nodeLlamaCpp: string; llamaCpp: string; commit: string; cmake: string[]; buildSeconds: number; builtAt: string } | undefined;

export interface LlamaServerOptions {
  /** One model (`-m`). */
  model?: string;
  /** With `model`: `--alias`; default the file name without .gguf; null: none (the id is the path). */
  alias?: string | null;
  /** Router mode: these files linked into a temporary --models-dir. */
  models?: string[];
  /** Router mode: a --models-dir of your own. */
  routerModelsDir?: string;
  /** `-c`; default the model's n_ctx_train. */
  ctx?: number;
  /** `--api-key`. */
  apiKey?: string;
  /** `--jinja` (default true) or `--no-jinja`. */
  jinja?: boolean;
  extraArgs?: string[];
  /** Pass the server's output through to stderr. */
  echo?: boolean;
}

export interface LlamaServer {
  /** http://127.0.0.1:PORT, without /v1. */
  url: string;
  port: number;
  binary: string;
  args: string[];
  output(): string;
  stop(): Promise<void>;
}

/** Starts llama-server on a free port of 127.0.0.1; resolves when /health answers 200. */
export function startLlamaServer(options: LlamaServerOptions): Promise<LlamaServer>;
