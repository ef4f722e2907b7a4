// A turn with tool cards, as a person sees it in the dark theme: the model writes a line and calls list_directory and
// read_file in parallel; the cards show each call and its status, open to the exact arguments and result, and the
// footer counts both requests. Takes the README's screenshot of the cards (docs/screenshots/chat-tool-cards.png).
import { step, visible, waitFor } from './harness.mjs';
import { CALLS, FIRST_TEXT, ask, chatRequests, checkSecondRequest, expectTwoRequests, readCards, replyDone, respond } from './toolScript.mjs';

export const title = 'Tool cards in a chat turn';

export const workbench = { workspace: 'basic', settings: { 'workbench.colorTheme': 'Default Dark Modern' }, endpoint: { respond } };

export const timeoutMs = 90_000;

/** Drags the sash on the side bar's right edge until the side bar is `width` px wide. */
async function widenSideBar(wb, width) {
  const sidebar = wb.page.locator('.part.sidebar').first();
  const box = await step('measuring the side bar', () => sidebar.boundingBox());
  if (!box) throw new Error('the side bar has no box');
  const sash = await step("finding the side bar's sash", () => wb.page.locator('.monaco-sash.vertical').evaluateAll((els, right) => {
    const near = els.map((el) => el.getBoundingClientRect()).filter((r) => r.height > 100 && Math.abs(r.left + r.width / 2 - right) < 6);
    return near.length ? { x: near[0].left + near[0].width / 2, y: near[0].top + near[0].height / 2 } : undefined;
  }, box.x + box.width));
  if (!sash) throw new Error(`no vertical sash at the side bar's right edge (x ${box.x + box.width})`);
  await step("dragging the side bar's sash", async () => {
    await wb.page.mouse.move(sash.x, sash.y);
    await wb.page.mouse.down();
    await wb.page.mouse.move(sash.x + (box.x + width - (box.x + box.width)), sash.y, { steps: 8 });
    await wb.page.mouse.up();
    await wb.page.mouse.move(box.x + width + 300, sash.y);
  });
  // The sash stays highlighted while the mouse is on it and for a moment after.
  await waitFor('the sash to lose its highlight', async () => (await wb.page.locator('.monaco-sash.hover, .monaco-sash.active').count()) === 0);
  await waitFor(`the side bar to be about ${width} px wide`, async () => Math.abs(((await sidebar.boundingBox())?.width ?? 0) - width) < 12);
}

export const tests = {
  async 'a reply that calls two tools shows a card per call, done, and the final answer; the footer counts 2 requests'(wb) {
    const chat = await wb.openParleyView();
    const reply = await ask(wb, 'What is in this project?');
    await replyDone(wb, reply);

    // The turn reads in order: the model's line, the two cards, then the answer.
    await visible(reply.locator('.tool-step').getByText(FIRST_TEXT), `the text before the calls ("${FIRST_TEXT}")`);
    await visible(reply.locator('strong', { hasText: 'shout(name)' }), "the final answer's Markdown (bold code)");
    const order = await step('reading the order of the turn', () => reply.locator('.turn-body').evaluate((body) => {
      const first = [...body.querySelectorAll('.tool-step p')].find((p) => p.textContent.includes('Let me look'));
      const cards = [...body.querySelectorAll('.tool-card')];
      const answer = [...body.querySelectorAll('li')].find((li) => li.textContent.includes('shout(name)'));
      const before = (a, b) => Boolean(a && b && a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
      return { textFirst: before(first, cards[0]), cardsInOrder: before(cards[0], cards[1]), answerLast: before(cards[1], answer) };
    }));
    if (!order.textFirst || !order.cardsInOrder || !order.answerLast) throw new Error(`the turn is not text, cards, answer in that order: ${JSON.stringify(order)}`);

    const cards = await readCards(reply);
    const expected = CALLS.map((c) => ({ name: c.name, arg: c.summary, status: 'Done', statusClass: 'status-done' }));
    const got = cards.map(({ name, arg, status, statusClass }) => ({ name, arg, status, statusClass }));
    if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`the cards are ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
    for (const c of cards) if (!/^\d+(\.\d)? m?s$/.test(c.ms)) throw new Error(`the ${c.name} card shows "${c.ms}" as its time`);
    if (cards.some((c) => c.open)) throw new Error('a card is open before anyone opened it');

    const results = checkSecondRequest(chatRequests(wb));
    if (!results[CALLS[1].id].includes('export function shout(name: string): string {')) throw new Error(`read_file sent the model:\n${results[CALLS[1].id]}`);
    if (!/^\.: \d+ entries\nsrc\/\nREADME\.md$/m.test(results[CALLS[0].id])) throw new Error(`list_directory sent the model:\n${results[CALLS[0].id]}`);
    await expectTwoRequests(reply);
    // The turn ended cleanly: no error card in the panel.
    if (await chat.locator('.error-card').count()) throw new Error(`an error card is shown: ${await chat.locator('.error-card').first().innerText()}`);
  },

  async 'a card opens with Enter (and a click) to the exact arguments and the result the model received'(wb) {
    const chat = wb.chatFrame();
    const reply = chat.locator('article[aria-label="Parley"]').last();
    const results = checkSecondRequest(chatRequests(wb));
    const card = (i) => reply.locator('.tool-card').nth(i);

    // Keyboard: focus the read_file card's line and press Enter.
    const readLine = card(1).locator('summary');
    await step('focusing the read_file card', () => readLine.focus());
    await step('pressing Enter on it', () => readLine.press('Enter'));
    await waitFor('the read_file card to open', async () => (await readCards(reply))[1].open);
    const shown = async (i) => ({
      args: await card(i).locator('.tool-args').innerText(),
      result: await card(i).locator('.tool-result').innerText(),
    });
    const read = await shown(1);
    if (read.args !== CALLS[1].args) throw new Error(`the read_file card shows the arguments ${JSON.stringify(read.args)}, expected exactly ${JSON.stringify(CALLS[1].args)}`);
    if (read.result.trimEnd() !== results[CALLS[1].id].trimEnd()) throw new Error(`the read_file card's result is not what the model received:\ncard:\n${read.result}\nmodel:\n${results[CALLS[1].id]}`);
    await visible(card(1).getByText('export function greet(name: string): string {', { exact: false }), "greet.ts's text in the card");
    for (const label of ['Arguments', 'Result']) await visible(card(1).locator('.tool-label', { hasText: label }), `the "${label}" label in the open card`);

    // Mouse: a click opens the list_directory card, a second click closes it again.
    await step('clicking the list_directory card', () => card(0).locator('summary').click());
    await waitFor('the list_directory card to open', async () => (await readCards(reply))[0].open);
    const list = await shown(0);
    if (list.args !== CALLS[0].args) throw new Error(`the list_directory card shows the arguments ${JSON.stringify(list.args)}, expected ${JSON.stringify(CALLS[0].args)}`);
    if (list.result.trimEnd() !== results[CALLS[0].id].trimEnd()) throw new Error(`the list_directory card's result is not what the model received:\ncard:\n${list.result}\nmodel:\n${results[CALLS[0].id]}`);
    await step('clicking the list_directory card again', () => card(0).locator('summary').click());
    await waitFor('the list_directory card to close, the read_file card staying open', async () => {
      const [a, b] = await readCards(reply);
      return !a.open && b.open;
    });

    const bg = await reply.evaluate((el) => getComputedStyle(el.ownerDocument.body).backgroundColor);
    const [r, g, b] = (bg.match(/\d+/g) ?? []).map(Number);
    if (!(r < 80 && g < 80 && b < 80)) throw new Error(`the panel background is ${bg}, not a dark theme`);
    // The README's screenshot: the turn with one card open, the footer in view, in a side bar dragged wider (as a
    // reader would for a chat) so that a card's line shows its whole path.
    await widenSideBar(wb, 440);
    await step('scrolling the footer into view', () => reply.locator('.turn-footer').scrollIntoViewIfNeeded());
    await wb.screenshot('chat-tool-cards');
  },
};
