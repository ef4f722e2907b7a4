// Approval in the panel (parley.tools.askBeforeReading): each of the model's two calls waits in its card with Allow
// once / Always allow this tool / Deny, reachable and answered with the keyboard or the mouse; nothing runs and no
// request leaves before the answer; the card shows the decision and the turn completes.
import { step, visible, waitFor } from './harness.mjs';
import { CALLS, ask, cardStatus, chatRequests, checkSecondRequest, expectTwoRequests, readCards, replyDone, respond } from './toolScript.mjs';

export const title = 'Tool approval in a chat turn';

export const workbench = { workspace: 'basic', settings: { 'parley.tools.askBeforeReading': true }, endpoint: { respond } };

export const timeoutMs = 90_000;

const BUTTONS = ['Allow once', 'Always allow this tool', 'Deny'];

/** The label of the element that has the focus in the panel's document. */
function focused(chat) {
  return chat.locator('body').evaluate((body) => {
    const a = body.ownerDocument.activeElement;
    return a ? (a.getAttribute('aria-label') || a.textContent || a.tagName).trim() : '';
  });
}

export const tests = {
  async 'a call waits for approval: keyboard Deny, then Allow once with a click; the turn completes'(wb) {
    const chat = await wb.openParleyView();
    const reply = await ask(wb, 'What is in this project?');
    const card = (i) => reply.locator('.tool-card').nth(i);

    // The first call waits, with its question and three buttons; nothing has run and no second request went out.
    await cardStatus(reply, 0, 'waiting', 30_000);
    // Each call has one argument (path): the question names the tool, then shows the argument open.
    const question = card(0).getByRole('group', { name: `Run ${CALLS[0].name} with this argument?` });
    await visible(question, 'the approval question of the list_directory card');
    await visible(question.locator('.tool-question-value', { hasText: CALLS[0].summary }), 'the path, shown open in the question');
    for (const name of BUTTONS) await visible(question.getByRole('button', { name, exact: true }), `the "${name}" button`);
    if ((await readCards(reply))[0].status !== 'Waiting for approval') throw new Error(`the waiting card says "${(await readCards(reply))[0].status}"`);
    // The second call waits its turn, and says so (it does not claim to run).
    if ((await readCards(reply))[1].status !== 'Queued') throw new Error(`the second card says "${(await readCards(reply))[1].status}" while the first waits, expected "Queued"`);
    await visible(chat.locator('[aria-live="polite"]').getByText(`Approval needed. Run ${CALLS[0].name} with this argument? path: ${CALLS[0].summary}.`, { exact: false }), 'the approval question announced to screen readers');

    // Keyboard-reachable: the question took the focus (the composer was empty), and Tab walks its buttons.
    await waitFor('the focus on "Allow once" (the question takes it)', async () => (await focused(chat)) === 'Allow once');
    for (const name of BUTTONS.slice(1)) {
      await wb.page.keyboard.press('Tab');
      await waitFor(`Tab to move the focus to "${name}"`, async () => (await focused(chat)) === name);
    }
    await wb.screenshot('chat-tool-approval');
    if (chatRequests(wb).length !== 1) throw new Error(`${chatRequests(wb).length} chat requests went out while a call waited, expected 1`);
    if ((await readCards(reply))[0].statusClass !== 'status-waiting') throw new Error('the call did not wait');

    await step('pressing Enter on Deny', () => wb.page.keyboard.press('Enter'));
    await cardStatus(reply, 0, 'denied');
    if ((await readCards(reply))[0].status !== 'Denied') throw new Error(`the denied card says "${(await readCards(reply))[0].status}"`);
    if (await card(0).locator('.tool-question').count()) throw new Error('the denied card still asks');

    // The second call asks next; answered with a click.
    await cardStatus(reply, 1, 'waiting');
    const second = card(1).getByRole('group', { name: `Run ${CALLS[1].name} with this argument?` });
    await step('clicking Allow once on the read_file card', () => second.getByRole('button', { name: 'Allow once', exact: true }).click());
    await cardStatus(reply, 1, 'done');
    await replyDone(wb, reply);

    const cards = await readCards(reply);
    const got = cards.map(({ name, arg, status }) => `${name} ${arg} ${status}`);
    const expected = [`${CALLS[0].name} ${CALLS[0].summary} Denied`, `${CALLS[1].name} ${CALLS[1].summary} Done`];
    if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`the cards are ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
    if (await reply.locator('.tool-question').count()) throw new Error('a question is still shown after the turn');
    await visible(reply.locator('strong', { hasText: 'shout(name)' }), 'the final answer');

    // The model was told the first call was denied, and got the file for the second.
    const results = checkSecondRequest(chatRequests(wb));
    if (!/denied/i.test(results[CALLS[0].id])) throw new Error(`the denied call's result says: ${results[CALLS[0].id]}`);
    if (!results[CALLS[1].id].includes('export function greet')) throw new Error(`the allowed read_file sent: ${results[CALLS[1].id]}`);
    await expectTwoRequests(reply);
    // Opened, the denied card shows what the model was told.
    await step('opening the denied card', () => card(0).locator('summary').click());
    await visible(card(0).locator('.tool-result', { hasText: 'denied' }), "the denied card's result");
    await wb.screenshot('chat-tool-approval-answered');
  },
};
