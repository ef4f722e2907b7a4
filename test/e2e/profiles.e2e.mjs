// Two endpoint profiles and the context meter, as a person uses them: the header's profile list switches the open
// conversation to the other profile (its model and its custom header go with the next question), the meter shows how
// full the model's window is and grows with the conversation. Takes the README's screenshot of the header
// (docs/screenshots/chat-profiles-meter.png).
import { step, visible, waitFor } from './harness.mjs';
import { ask, replyDone } from './toolScript.mjs';

export const title = 'Endpoint profiles and the context meter in the panel header';

/** Both profiles point at the demo endpoint: Gateway with its own model, window and header. */
export const workbench = {
  workspace: 'basic',
  settings: (url) => ({
    'workbench.colorTheme': 'Default Dark Modern',
    'parley.contextWindow': 4096,
    'parley.endpoints': [{
      name: 'Gateway',
      baseUrl: url,
      model: 'gateway-model',
      headers: { 'X-Team': 'alpha' },
      models: { 'gateway-model': { contextWindow: 2048, maxOutputTokens: 256 } },
    }],
  }),
  endpoint: { chunkDelayMs: 5 },
};

export const timeoutMs = 90_000;

/** The meter's text ("123 / 4.1k") and its accessible value. */
async function readMeter(chat) {
  const meter = chat.locator('header .context-meter');
  await visible(meter, 'the context meter');
  return step('reading the meter', () => meter.evaluate((el) => ({
    text: el.querySelector('.meter-text')?.textContent ?? '',
    now: Number(el.querySelector('[role="meter"]')?.getAttribute('aria-valuenow') ?? NaN),
    max: Number(el.querySelector('[role="meter"]')?.getAttribute('aria-valuemax') ?? NaN),
  })));
}

/** Asks, as toolScript's ask does, and waits until the reply is done (the Stop button gone, its footer shown). */
async function askAndWait(wb, text) {
  await replyDone(wb, await ask(wb, text));
}

export const tests = {
  async 'the header switches profile in two clicks; the next question goes with its model and header; the meter grows'(wb) {
    const chat = await wb.openParleyView();
    const select = chat.getByRole('combobox', { name: 'Endpoint profile' });
    await visible(select, 'the profile list in the header');
    const options = await step('reading the profiles offered', () => select.locator('option').allTextContents());
    if (JSON.stringify(options) !== JSON.stringify(['Default', 'Gateway'])) throw new Error(`the header offers ${JSON.stringify(options)}`);

    // Default: parley.contextWindow's 4,096 tokens.
    await waitFor('the meter to know the window', async () => (await readMeter(chat)).max === 4096);
    const empty = await readMeter(chat);
    if (!/ \/ 4\.1k$/.test(empty.text)) throw new Error(`the meter reads "${empty.text}"`);

    await askAndWait(wb, 'Hello from the default profile');
    const first = wb.endpoint.requests.filter((r) => r.method === 'POST').at(-1);
    if (first?.json?.model !== 'parley-demo' || first.headers['x-team'] !== undefined) throw new Error(`the first question went as ${JSON.stringify({ model: first?.json?.model, team: first?.headers['x-team'] })}`);
    const after = await waitFor('the meter to grow after the reply', async () => {
      const m = await readMeter(chat);
      return m.now > empty.now ? m : undefined;
    });

    // Two clicks: open the list, pick Gateway (a native select takes the pick as one action).
    await step('picking Gateway in the profile list', () => select.selectOption({ label: 'Gateway' }));
    await waitFor('the header to show the Gateway model', async () => (await chat.locator('header').textContent())?.includes('gateway-model'));
    await waitFor("the meter to show Gateway's 2,048-token window", async () => (await readMeter(chat)).max === 2048);

    await askAndWait(wb, 'And now through the gateway');
    const second = wb.endpoint.requests.filter((r) => r.method === 'POST').at(-1);
    if (second?.json?.model !== 'gateway-model') throw new Error(`the question after switching asked for ${second?.json?.model}`);
    if (second.headers['x-team'] !== 'alpha') throw new Error(`the Gateway profile's header was ${JSON.stringify(second.headers['x-team'])}`);
    if (second.json.max_tokens !== 256 && second.json.max_completion_tokens !== 256) throw new Error(`the per-model output limit was not sent: ${JSON.stringify(second.json.max_tokens)}`);
    // The meter is drawn again once the reply is counted, which can come a moment after the reply shows.
    let later = await readMeter(chat);
    await waitFor('the meter to grow with the conversation', async () => {
      later = await readMeter(chat);
      return later.now > after.now;
    }).catch(() => {
      throw new Error(`the meter did not grow with the conversation: ${after.now} then ${later.now}`);
    });

    await wb.screenshot('chat-profiles-meter');
  },
};
