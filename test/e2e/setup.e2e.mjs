// First run: pointed at a hosted endpoint with no key, the panel shows the setup card with presets.
import { visible } from './harness.mjs';

export const title = 'First run: the setup card';

export const workbench = {
  workspace: 'basic',
  settings: { 'parley.baseUrl': 'https://api.openai.com', 'parley.model': 'gpt-4o-mini', 'workbench.colorTheme': 'Default Dark Modern' },
};

export const tests = {
  async 'the setup card names the origin and offers presets and Set API Key'(wb) {
    const chat = await wb.openParleyView();
    await visible(chat.getByText('https://api.openai.com', { exact: false }), 'the origin named on the setup card');
    for (const preset of ['OpenAI', 'OpenRouter', 'Groq', 'DeepSeek', 'Mistral', 'Ollama (local)', 'LM Studio (local)']) {
      await visible(chat.getByRole('button', { name: preset }), `the ${preset} preset`);
    }
    await visible(chat.getByRole('button', { name: 'Set API Key' }), 'the Set API Key button');
    await visible(chat.getByRole('button', { name: 'This endpoint needs no key' }), 'the "needs no key" button');
    const bg = await chat.locator('body').evaluate((el) => getComputedStyle(el).backgroundColor);
    const [r, g, b] = (bg.match(/\d+/g) ?? []).map(Number);
    if (!(r < 80 && g < 80 && b < 80)) throw new Error(`the panel background is ${bg}, not a dark theme`);
    await wb.page.mouse.move(800, 450);
    await wb.screenshot('setup-card-dark');
  },
};
