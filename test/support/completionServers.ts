// Test servers that answer Parley's completion routes the way each real server does, from test/fixtures/completion
// (SOURCES.md there says where each body comes from).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ServerResponse } from 'node:http';
import type { Handler, RecordedRequest } from './server';

/** The path of a fixture of test/fixtures/completion (from a test bundle in out/test/<kind>/). */
export function completionFixturePath(name: string): string {
  return resolve(__dirname, '../../../test/fixtures/completion', name);
}

/** A fixture of test/fixtures/completion, as text. */
export function completionFixture(name: string): string {
  return readFileSync(completionFixturePath(name), 'utf8');
}

/** The servers the routes are tested against. */
export type CompletionServerKind = 'llamacpp' | 'llamacpp-nofim' | 'ollama' | 'ollama-noinsert' | 'vllm' | 'lmstudio' | 'mistral' | 'openai-chat' | 'no-usage';

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType });
  res.end(body);
}

const JSON_UTF8 = 'application/json; charset=utf-8';

/** A handler that answers as `kind` does (paths relative to the server's root; the OpenAI routes under /v1). */
export function completionServer(kind: CompletionServerKind): Handler {
  return (req: RecordedRequest, res: ServerResponse) => {
    const path = req.path.split('?')[0];
    const body = (req.json ?? {}) as Record<string, unknown>;
    const fx = (name: string, status = 200, type = JSON_UTF8) => send(res, status, type, completionFixture(name));
    switch (kind) {
      case 'llamacpp':
      case 'llamacpp-nofim':
        if (path === '/infill') return kind === 'llamacpp' ? fx('llamacpp-infill.json') : fx('llamacpp-infill-501.json', 501);
        // llama.cpp's /v1/completions takes any prompt and leaves `suffix` unread (recorded): a client must not end up here.
        if (path === '/v1/completions') return fx('llamacpp-v1-completions-suffix-unread.json');
        return fx('llamacpp-404.json', 404);
      case 'ollama':
      case 'ollama-noinsert': {
        const insert = kind === 'ollama';
        if (path === '/v1/completions') return body.suffix && !insert ? fx('ollama-v1-no-insert.json', 400, 'application/json') : fx('ollama-v1-completions.json', 200, 'application/json');
        if (path === '/api/generate') return body.suffix && !insert ? fx('ollama-api-generate-no-insert.json', 400) : fx('ollama-api-generate.json');
        return fx('ollama-404.txt', 404, 'text/plain');
      }
      case 'vllm':
        if (path === '/v1/completions') return body.suffix !== undefined ? fx('vllm-suffix-400.json', 400, 'application/json') : fx('vllm-completions.json', 200, 'application/json');
        return fx('vllm-404.json', 404, 'application/json');
      case 'lmstudio':
        if (path === '/v1/completions') return fx('lmstudio-completions.json');
        // LM Studio answers any other path 200, with an error in the body.
        return send(res, 200, JSON_UTF8, JSON.stringify({ error: `Unexpected endpoint or method. (${req.method} ${path})` }));
      case 'mistral':
        if (path === '/v1/fim/completions') return fx('mistral-fim.json', 200, 'application/json');
        return fx('vllm-404.json', 404, 'application/json');
      case 'openai-chat':
        if (path === '/v1/completions') return fx('openai-chat-model-completions-404.json', 404, 'application/json');
        return send(res, 404, 'application/json', JSON.stringify({ error: { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error', param: null, code: null } }));
      case 'no-usage':
        // A server that reports no usage: Parley estimates it.
        if (path === '/v1/completions') return send(res, 200, 'application/json', JSON.stringify({ object: 'text_completion', choices: [{ index: 0, text: 'a + b', finish_reason: 'stop' }] }));
        return send(res, 404, 'text/plain', 'Not Found');
    }
  };
}
