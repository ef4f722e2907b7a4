// First run: pointed at a hosted endpoint with no key, the panel shows the setup card with presets.
import { visible } from './harness.mjs';

export const title = 'First run: the setup card';

export const workbench = { workspace: 'basic', settings: { 'parley.baseUrl': 'https://api.openai.com', 'parley.model': 'gpt-4o-mini' } };

export const tests = {
  async 'the setup card names the origin and offers presets and Set API Key'(wb) {
    const chat = await wb.openParleyView();
    await visible(chat.getByText('https://api.openai.com', { exact: false }), 'the origin named on the setup card');
    for (const preset of ['OpenAI', 'OpenRouter', 'Groq', 'DeepSeek', 'Mistral', 'Ollama (local)', 'LM Studio (local)']) {
      await visible(chat.getByRole('button', { name: preset }), `the ${preset} preset`);
    }
    await visible(chat.getByRole('button', { name: 'Set API Key' }), 'the Set API Key button');
    await wb.screenshot('setup-card-dark');
  },
};
