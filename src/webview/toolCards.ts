// A turn's tool rounds: each step's text (Markdown, as a finished reply) and one compact card per tool call.
import type { ToolCallStatus, ToolCallView, ToolStepView } from '../shared/protocol';
import { DECISION_LABELS, moreBelowText, questionText, READ_TO_ALLOW } from '../shared/toolQuestion';
import { h, textNodes } from './dom';
import { MarkdownStream } from './markdownStream';
import { post } from './vscodeApi';

const STATUS_WORDS: Record<ToolCallStatus, string> = {
  queued: 'Queued',
  waiting: 'Waiting for approval',
  running: 'Running…',
  done: 'Done',
  denied: 'Denied',
  failed: 'Failed',
};

/** "120 ms", "1.4 s", "12 s". */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

/**
 * One value of a question, whole, in a box that scrolls when long. While its text goes on below the box, a marker says
 * how much and offers Show all; the value counts as read once its end has been in the box (it fits, it was scrolled
 * to the end) or it was shown whole. Until it is laid out, it is not read.
 */
class ValueBox {
  readonly el: HTMLElement;
  private readonly pre: HTMLPreElement;
  private readonly more: HTMLElement;
  private readonly marker: HTMLElement;
  private ended = false;

  constructor(text: string, changed: () => void) {
    this.pre = h('pre', { class: 'tool-text tool-question-value', onscroll: changed }, textNodes(text));
    this.marker = h('span', { class: 'tool-question-more-text' });
    this.more = h('div', { class: 'tool-question-more', hidden: true }, this.marker, h('button', {
      type: 'button',
      class: 'btn small secondary',
      onclick: () => {
        this.ended = true;
        this.more.hidden = true;
        this.pre.classList.add('whole');
        changed();
        this.pre.focus();
      },
    }, 'Show all'));
    this.el = h('div', { class: 'tool-question-box' }, this.pre, this.more);
  }

  /** The box's element whose size decides whether its text fits. */
  get box(): HTMLElement {
    return this.pre;
  }

  /** Measures the box (a layout read): whether the value has now been read to its end, and what the marker says. */
  update(): boolean {
    const p = this.pre;
    if (this.ended || !p.isConnected || p.getClientRects().length === 0) return this.ended;
    const below = p.scrollHeight - p.clientHeight - p.scrollTop;
    if (below <= 1) {
      this.ended = true;
      this.more.hidden = true;
      return true;
    }
    // A box with more text is a tab stop, so arrow keys can scroll it.
    p.tabIndex = 0;
    const line = parseFloat(getComputedStyle(p).lineHeight) || 16;
    this.marker.textContent = moreBelowText(Math.max(1, Math.ceil(below / line)));
    this.more.hidden = false;
    return false;
  }
}

/** How each question drawn measures its values and says how many are not read to their end yet (measureQuestion). */
const measures = new WeakMap<HTMLElement, () => number>();
let questions = 0;

/**
 * Measures a question's value boxes now (its Allow buttons follow) and returns how many values the reader has not yet
 * read to their end. For the transcript, before it announces the question and moves focus into it.
 */
export function measureQuestion(question: HTMLElement): number {
  return measures.get(question)?.() ?? 0;
}

/**
 * The approval question of a waiting call: the tool and every argument, open and whole. It is built from the call's
 * status alone (and only in a turn that is streaming here): nothing in a result or in model text can produce it. Allow
 * once and Always allow work only once every value has been read to its end (scrolled there, or shown whole): a value
 * cut by its box could hide what runs. Deny always works. A click answers once, naming the call it showed; the buttons
 * go when the host reports the new status.
 */
function approvalQuestion(call: ToolCallView): HTMLElement {
  let answered = false;
  const reasonId = `tool-question-reason-${++questions}`;
  // A host that listed no arguments: the exact JSON, rather than nothing.
  const boxes = (call.question ?? [{ name: '', value: call.arguments }]).map((a) => ({ name: a.name, box: new ValueBox(a.value, () => refresh()) }));
  const values = call.question
    ? h('dl', { class: 'tool-question-args' }, ...boxes.flatMap(({ name, box }) => [h('dt', { class: 'tool-question-name' }, name), h('dd', null, box.el)]))
    : boxes[0].box.el;
  const reason = h('div', { class: 'tool-question-reason', id: reasonId }, READ_TO_ALLOW);
  const buttons = DECISION_LABELS.map(({ decision, label }) => h('button', {
    type: 'button',
    class: decision === 'once' ? 'btn small' : 'btn small secondary',
    'data-decision': decision,
    'aria-describedby': decision === 'deny' ? undefined : reasonId,
    disabled: decision !== 'deny',
    onclick: () => {
      if (answered || (decision !== 'deny' && refresh() > 0)) return;
      answered = true;
      question.classList.add('answered');
      post({ type: 'toolApproval', callId: call.id, decision, name: call.name, arguments: call.arguments });
    },
  }, label));
  const question = h('div', { class: 'tool-question', role: 'group', 'aria-label': questionText(call) },
    h('div', { class: 'tool-question-text' }, questionText(call)),
    values,
    reason,
    h('div', { class: 'actions' }, ...buttons));
  const refresh = (): number => {
    const unread = boxes.filter(({ box }) => !box.update()).length;
    for (const b of buttons) if (b.dataset.decision !== 'deny') b.disabled = unread > 0;
    reason.hidden = unread === 0;
    return unread;
  };
  measures.set(question, refresh);
  // Laid out, or resized (the panel narrowed, a font changed): measured again.
  const resized = new ResizeObserver(() => refresh());
  for (const { box } of boxes) resized.observe(box.box);
  return question;
}

/**
 * One call's card: name, main argument, status and time on one line; arguments and result behind a disclosure. `live`:
 * the turn streams, so a waiting call may ask (a stored one never does).
 */
function toolCard(call: ToolCallView, live: boolean): HTMLElement {
  const status = h('span', { class: 'tool-status' }, STATUS_WORDS[call.status]);
  const summary = h('summary', { class: 'tool-line' },
    h('span', { class: 'tool-dot', 'aria-hidden': 'true' }),
    h('span', { class: 'tool-name' }, call.name),
    call.summary ? h('span', { class: 'tool-arg', title: call.summary }, call.summary) : null,
    status,
    call.ms !== undefined ? h('span', { class: 'tool-ms' }, formatDuration(call.ms)) : null);
  const io = h('div', { class: 'tool-io' },
    h('div', { class: 'tool-label' }, 'Arguments'),
    h('pre', { class: 'tool-text tool-args' }, textNodes(call.arguments)),
    call.result !== undefined ? h('div', { class: 'tool-label' }, 'Result') : null,
    call.result !== undefined ? h('pre', { class: 'tool-text tool-result' }, textNodes(call.result)) : null);
  return h('div', { class: `tool-card status-${call.status}` },
    h('details', { class: 'tool-details' }, summary, io),
    call.status === 'waiting' && live ? approvalQuestion(call) : null);
}

/** The text of one step: a finished reply's render, or nothing when the model wrote none. */
function stepText(text: string): HTMLElement | null {
  return /\S/.test(text) ? new MarkdownStream(text, false).el : null;
}

/** Hooks the turn gives its steps: a question appeared (to announce it and, maybe, focus it); whether the turn streams. */
interface StepsHost {
  questionShown(question: HTMLElement, call: ToolCallView): void;
  live(): boolean;
}

interface RenderedStep {
  text: string;
  textEl: HTMLElement | null;
  calls: ToolCallView[];
  cards: HTMLElement[];
  el: HTMLElement;
}

const sameCall = (a: ToolCallView, b: ToolCallView) => a.id === b.id && a.name === b.name && a.summary === b.summary &&
  a.arguments === b.arguments && a.status === b.status && a.ms === b.ms && a.result === b.result &&
  JSON.stringify(a.question) === JSON.stringify(b.question);

/**
 * The steps of one turn. update() makes the DOM what a fresh render of the steps gives, touching only the steps
 * and cards that changed; a changed card is built anew and keeps whether it was open and where focus was.
 */
export class StepsView {
  readonly el = h('div', { class: 'tool-steps' });
  private rendered: RenderedStep[] = [];
  /** Where focus was before a question took it: it goes back there once the question is answered. */
  private returnFocus?: HTMLElement;

  constructor(private readonly host: StepsHost) {}

  update(steps: readonly ToolStepView[]): void {
    steps.forEach((step, i) => this.updateStep(i, step));
    for (const old of this.rendered.splice(steps.length)) old.el.remove();
  }

  /** Focus moves into a question that just appeared: remember where it came from. */
  tookFocus(from: Element | null): void {
    this.returnFocus = from instanceof HTMLElement && from !== document.body ? from : undefined;
  }

  private updateStep(i: number, step: ToolStepView): void {
    let r = this.rendered[i];
    if (!r) {
      r = { text: step.text, textEl: stepText(step.text), calls: [], cards: [], el: h('div', { class: 'tool-step' }) };
      r.el.append(...(r.textEl ? [r.textEl] : []), h('div', { class: 'tool-calls' }));
      this.rendered.push(r);
      this.el.append(r.el);
    } else if (r.text !== step.text) {
      const textEl = stepText(step.text);
      if (r.textEl && textEl) r.textEl.replaceWith(textEl);
      else if (r.textEl) r.textEl.remove();
      else if (textEl) r.el.prepend(textEl);
      r.text = step.text;
      r.textEl = textEl;
    }
    const list = r.el.lastElementChild!;
    step.calls.forEach((call, j) => {
      const old = r.calls[j];
      if (old && sameCall(old, call)) return;
      const card = toolCard(call, this.host.live());
      const oldCard = r.cards[j];
      if (oldCard) {
        this.carryState(oldCard, card);
        oldCard.replaceWith(card);
      } else {
        list.append(card);
      }
      r.calls[j] = { ...call, question: call.question?.map((a) => ({ ...a })) };
      r.cards[j] = card;
      const question = card.querySelector<HTMLElement>('.tool-question');
      if (question && old?.status !== 'waiting') this.host.questionShown(question, call);
    });
    for (const card of r.cards.splice(step.calls.length)) card.remove();
    r.calls.length = step.calls.length;
  }

  /** A card is replaced: it stays open if it was, and focus inside it lands on its counterpart. */
  private carryState(oldCard: HTMLElement, card: HTMLElement): void {
    const oldDetails = oldCard.querySelector('details');
    if (oldDetails?.open) card.querySelector('details')!.open = true;
    const active = document.activeElement;
    if (!active || !oldCard.contains(active)) return;
    const decision = (active as HTMLElement).dataset?.decision;
    const sameButton = decision ? card.querySelector<HTMLElement>(`button[data-decision="${decision}"]`) : null;
    // The question was answered: focus goes back to where it was before the question took it, or to the card.
    const back = this.returnFocus?.isConnected ? this.returnFocus : undefined;
    const target = sameButton ?? (decision && back ? back : card.querySelector('summary'));
    if (!sameButton) this.returnFocus = undefined;
    queueMicrotask(() => target?.focus());
  }
}
