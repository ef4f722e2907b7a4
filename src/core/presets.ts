// Endpoint presets offered by the setup card. Local servers need no key.
import type { PresetView } from '../shared/protocol';

export const PRESETS: readonly PresetView[] = [
  { id: 'openai', label: 'OpenAI', baseUrl: 'https://api.openai.com', model: 'gpt-4o-mini', needsKey: true },
  { id: 'openrouter', label: 'OpenRouter', baseUrl: 'https://openrouter.ai/api/v1', model: 'openai/gpt-4o-mini', needsKey: true },
  { id: 'groq', label: 'Groq', baseUrl: 'https://api.groq.com/openai/v1', model: 'llama-3.3-70b-versatile', needsKey: true },
  { id: 'deepseek', label: 'DeepSeek', baseUrl: 'https://api.deepseek.com', model: 'deepseek-chat', needsKey: true },
  { id: 'mistral', label: 'Mistral', baseUrl: 'https://api.mistral.ai', model: 'mistral-small-latest', needsKey: true },
  { id: 'ollama', label: 'Ollama (local)', baseUrl: 'http://localhost:11434', model: 'llama3.2', needsKey: false },
  { id: 'lmstudio', label: 'LM Studio (local)', baseUrl: 'http://localhost:1234', model: 'local-model', needsKey: false },
  { id: 'custom', label: 'Custom…', baseUrl: '', model: '', needsKey: true },
];

/** Model name of `npm start`'s demo endpoint; the panel says plainly when it is in use. */
export const DEMO_MODEL = 'parley-demo';
