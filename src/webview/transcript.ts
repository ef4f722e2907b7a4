// The conversation log: turns, virtualisation of long conversations, auto-scroll and "Jump to latest".
import type { ToolCallView, ToolStepView, TurnView } from '../shared/protocol';
import { Announcer } from './announcer';
import { h, icon } from './dom';
import { flushNow } from './frame';
import { approvalAnnouncement } from '../shared/toolQuestion';
import { measureQuestion, type StepsView } from './toolCards';
import { isSummary, TurnItem, type TurnHost } from './turn';

/** Below this many turns every body stays rendered; above it, bodies far from the viewport become placeholders. */
const VIRTUALIZE_AFTER = 40;
/** Turns rendered at once when a long conversation opens (the rest wait for the observer). */
const EAGER_TAIL = 12;
/** How far outside the viewport turns stay rendered. */
const KEEP_MARGIN = '1200px 0px';
/** Within this many pixels of the end counts as "at the bottom". */
const BOTTOM_SLACK = 8;

export class Transcript implements TurnHost {
  /** The scrolling container; holds the log and the Jump to latest button. */
  readonly el: HTMLElement;
  readonly log: HTMLElement;
  readonly announcer = new Announcer();
  private readonly jump: HTMLButtonElement;
  private items: TurnItem[] = [];
  private byId = new Map<string, TurnItem>();
  private byArticle = new WeakMap<Element, TurnItem>();
  private observer: IntersectionObserver;
  private stick = true;
  /** Where the view was after the last scroll: content growing below it must not count as scrolling up. */
  private lastScrollTop = 0;
  private ticker: number | undefined;

  constructor() {
    // Focusable so that keyboard users can scroll the conversation with the arrow and page keys.
    this.log = h('div', { class: 'log', role: 'log', 'aria-label': 'Conversation', 'aria-live': 'off', tabindex: '0' });
    this.el = h('div', { class: 'scroller stuck' }, this.log);
    this.jump = h('button', {
      type: 'button', class: 'jump hidden', 'aria-label': 'Jump to latest',
      onclick: () => this.jumpToLatest(),
    }, icon('down'), 'Jump to latest');

    this.observer = new IntersectionObserver((entries) => this.onIntersect(entries), { root: this.el, rootMargin: KEEP_MARGIN });
    this.el.addEventListener('scroll', () => this.onScroll(), { passive: true });
    this.el.addEventListener('wheel', (e) => {
      if (e.deltaY < 0) this.setStick(false);
    }, { passive: true });
    // Whatever changes the content's height (streaming, images decoding, a placeholder filling in),
    // a reader at the bottom stays at the bottom.
    new ResizeObserver(() => {
      if (this.stick) this.scrollToBottom();
    }).observe(this.log);
    new ResizeObserver(() => {
      if (this.stick) this.scrollToBottom();
    }).observe(this.el);
  }

  /** The floating "Jump to latest" button (placed by the caller next to the scroller). */
  get jumpButton(): HTMLButtonElement {
    return this.jump;
  }

  /** Replaces the whole conversation (snapshot). */
  setTurns(turns: TurnView[]): void {
    for (const item of this.items) {
      this.observer.unobserve(item.article);
      item.dispose();
    }
    this.items = [];
    this.byId.clear();
    this.log.replaceChildren();
    const eagerFrom = turns.length > VIRTUALIZE_AFTER ? turns.length - EAGER_TAIL : 0;
    turns.forEach((turn, i) => {
      const item = this.add(structuredCloneTurn(turn));
      if (i >= eagerFrom || item.streaming) item.render();
    });
    this.markLast();
    this.setStick(true);
    this.scrollToBottom();
  }

  turnStart(turn: TurnView): void {
    const existing = this.byId.get(turn.id);
    const item = new TurnItem(structuredCloneTurn(turn), this);
    if (existing) {
      this.observer.unobserve(existing.article);
      existing.dispose();
      existing.article.replaceWith(item.article);
      this.items[this.items.indexOf(existing)] = item;
      this.byId.set(turn.id, item);
      this.byArticle.set(item.article, item);
      this.observer.observe(item.article);
    } else {
      this.addItem(item);
    }
    if (turn.role === 'assistant' && turn.status === 'streaming') this.announcer.reset();
    item.render();
    this.markLast();
    this.thinkingChanged();
  }

  delta(turnId: string, text?: string, reasoning?: string): void {
    this.byId.get(turnId)?.delta(text, reasoning);
  }

  /** A tool round began or a call changed (turnSteps). */
  turnSteps(turnId: string, steps: ToolStepView[]): void {
    this.byId.get(turnId)?.setSteps(steps);
  }

  turnEnd(turn: TurnView): void {
    const item = this.byId.get(turn.id);
    if (!item) {
      this.turnStart(turn);
      return;
    }
    const wasStreaming = item.streaming;
    flushNow();
    item.finish(structuredCloneTurn(turn));
    if (wasStreaming && turn.status !== 'done') {
      const words: Record<string, string> = { stopped: 'Reply stopped.', interrupted: 'Reply interrupted.', truncated: 'Reply truncated.', filtered: 'Reply filtered.', incomplete: 'Reply incomplete.', error: 'Reply ended with an error.' };
      this.announcer.say(words[turn.status] ?? '');
    }
    if (turn.error) this.announcer.say(turn.error.title);
    this.markLast();
  }

  /** Number of turns with a rendered (not placeholder) body. */
  get renderedCount(): number {
    return this.items.filter((i) => i.rendered).length;
  }

  // TurnHost
  onBlock(el: HTMLElement): void {
    this.announcer.blockDone(el);
  }

  onOpenRendered(el: HTMLElement): void {
    this.announcer.openRendered(el);
  }

  streamRestarted(): void {
    this.announcer.reset();
  }

  /**
   * A tool call asks for approval: the question is announced (with how many values go on below their box, to be read
   * before Allow works), and focus moves to its first button that works (Allow once, or the first Show all while a
   * value is not read to its end) unless the reader is typing (a draft in the composer, or another field) or already
   * in another question. A reader who is typing is not interrupted; Shift+Tab from the composer reaches Deny.
   */
  toolQuestion(question: HTMLElement, call: ToolCallView, steps: StepsView): void {
    queueMicrotask(() => {
      // Measured here, in the document: whether each value fits its box decides what is said and what takes focus.
      this.announcer.say(approvalAnnouncement(call, measureQuestion(question)));
      if (!question.isConnected) return;
      const active = document.activeElement;
      if (isTyping(active) || active?.closest('.tool-question')) return;
      steps.tookFocus(active);
      question.querySelector<HTMLElement>('.tool-question-more:not([hidden]) button, .actions button:not(:disabled)')?.focus();
    });
  }

  /** Starts or stops the one-second tick that updates "Thinking… N s" labels. */
  thinkingChanged(): void {
    const anyThinking = this.items.some((i) => i.thinking);
    if (anyThinking && this.ticker === undefined) {
      this.ticker = window.setInterval(() => {
        for (const i of this.items) if (i.thinking) i.updateThinkingLabel();
        this.thinkingChanged();
      }, 1000);
    } else if (!anyThinking && this.ticker !== undefined) {
      window.clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  jumpToLatest(): void {
    this.setStick(true);
    this.scrollToBottom();
  }

  private add(view: TurnView): TurnItem {
    const item = new TurnItem(view, this);
    this.addItem(item);
    return item;
  }

  private addItem(item: TurnItem): void {
    this.items.push(item);
    this.byId.set(item.view.id, item);
    this.byArticle.set(item.article, item);
    this.log.append(item.article);
    this.observer.observe(item.article);
  }

  /**
   * Regenerate shows on the last turn when it is a reply; Edit on the last question. Every turn before the last
   * summary is marked compacted: the model is sent that summary instead (older summaries included).
   */
  private markLast(): void {
    const last = this.items[this.items.length - 1];
    let lastUser: TurnItem | undefined;
    for (let i = this.items.length - 1; i >= 0 && !lastUser; i--) if (this.items[i].view.role === 'user') lastUser = this.items[i];
    let lastSummary = -1;
    for (let i = this.items.length - 1; i >= 0 && lastSummary < 0; i--) if (isSummary(this.items[i].view)) lastSummary = i;
    this.items.forEach((item, i) => {
      item.article.classList.toggle('is-last', item === last);
      item.article.classList.toggle('is-last-user', item === lastUser);
      item.setCompacted(i < lastSummary);
    });
  }

  private onIntersect(entries: IntersectionObserverEntry[]): void {
    const virtualize = this.items.length > VIRTUALIZE_AFTER;
    for (const entry of entries) {
      const item = this.byArticle.get(entry.target);
      if (!item) continue;
      if (entry.isIntersecting) item.render();
      else if (virtualize) item.unrender();
    }
  }

  /**
   * Reaching the bottom re-enables auto-scroll; moving up (by wheel, keys, scrollbar, a screen reader or
   * find-in-page) stops it. A scroll event that arrives after the content grew, with the view where we left
   * it, changes nothing.
   */
  private onScroll(): void {
    const el = this.el;
    const top = el.scrollTop;
    const movedUp = top < this.lastScrollTop - 1;
    this.lastScrollTop = top;
    if (el.scrollHeight - top - el.clientHeight <= BOTTOM_SLACK) this.setStick(true);
    else if (movedUp) this.setStick(false);
  }

  private setStick(value: boolean): void {
    this.stick = value;
    // Scroll anchoring only matters to a reader who scrolled up (see .scroller.stuck in the CSS).
    this.el.classList.toggle('stuck', value);
    const overflowing = this.el.scrollHeight > this.el.clientHeight + BOTTOM_SLACK;
    this.jump.classList.toggle('hidden', value || !overflowing);
  }

  private scrollToBottom(): void {
    // The browser clamps to the end; not reading scrollHeight here avoids a layout in the middle of a frame.
    this.el.scrollTop = Number.MAX_SAFE_INTEGER;
    this.lastScrollTop = this.el.scrollTop;
  }
}

/** True when `el` is a field the reader is typing in: the composer with a draft, or any other input. */
function isTyping(el: Element | null): boolean {
  if (el instanceof HTMLTextAreaElement) return el.value.trim() !== '';
  return el instanceof HTMLInputElement || el instanceof HTMLSelectElement;
}

/** Turns are mutated as deltas arrive; never mutate the host's message objects. */
function structuredCloneTurn(turn: TurnView): TurnView {
  return {
    ...turn,
    images: turn.images ? [...turn.images] : undefined,
    context: turn.context ? [...turn.context] : undefined,
  };
}
