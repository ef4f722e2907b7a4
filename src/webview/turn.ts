// One message in the transcript: its <article>, its body (or a placeholder of remembered height) and its actions.
import type { ActionId, ErrorView, ImageView, ToolCallView, ToolStepView, TurnStatus, TurnView, UsageView } from '../shared/protocol';
import { appendText, formatCount, h, textNodes } from './dom';
import { chipLabel } from './mentionPicker';
import { MarkdownStream } from './markdownStream';
import { StepsView } from './toolCards';
import { post } from './vscodeApi';

/** Button labels for host actions, shared by error cards, the setup card and notices. */
export const ACTION_LABELS: Record<ActionId, string> = {
  retry: 'Retry',
  setApiKey: 'Set API Key',
  markNoKey: 'This endpoint needs no key',
  openSettings: 'Open Settings',
  testConnection: 'Test Connection',
  continue: 'Continue',
  showLog: 'Show Log',
  compact: 'Compact',
  compactRetry: 'Compact and retry',
  switchEndpoint: 'Switch Endpoint',
  sendOnceAnyway: 'Send once anyway',
  openBudgetSettings: 'Open budget settings',
  rules: 'Rules',
};

const STATUS_LABELS: Partial<Record<TurnStatus, string>> = {
  stopped: 'Stopped',
  interrupted: 'Interrupted',
  truncated: 'Truncated',
  filtered: 'Filtered',
  incomplete: 'Incomplete',
  error: 'Error',
};

const STATUS_TITLES: Partial<Record<TurnStatus, string>> = {
  stopped: 'You stopped this reply.',
  interrupted: 'The window was reloaded or closed while this reply streamed: the text received until then is kept.',
  truncated: 'The reply hit the token limit (finish_reason: length).',
  filtered: 'The provider filtered this reply (content_filter).',
  incomplete: 'The stream ended without a finish reason.',
  error: 'The reply ended with an error.',
};

/** The title and description of a turn a later summary stands for. */
const COMPACTED_WORDS = 'Summarized: not sent to the model any more';

/** True for a summary made by compaction (it stands for the `summaryOf` turns before it). */
export function isSummary(view: TurnView): boolean {
  return view.role === 'assistant' && view.summaryOf !== undefined;
}

const DATA_IMAGE = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+=*$/;

/** A thumbnail for an image the host or the composer holds; anything but an image data URL shows its name. */
export function thumbnail(image: ImageView): HTMLElement {
  if (!DATA_IMAGE.test(image.dataUrl)) return h('span', { class: 'thumb thumb-missing' }, image.name);
  return h('img', { class: 'thumb', src: image.dataUrl, alt: image.name, title: image.name });
}

/** Builds an action button that posts `{type:'action'}`. */
export function actionButton(action: ActionId, primary = false): HTMLButtonElement {
  return h('button', {
    type: 'button',
    class: primary ? 'btn' : 'btn secondary',
    onclick: () => post({ type: 'action', action }),
  }, ACTION_LABELS[action]);
}

export function usageText(usage: UsageView): string {
  return usage.estimated ? `≈ ${formatCount(usage.total)} tokens (estimated)` : `${formatCount(usage.total)} tokens`;
}

/** The footer's usage: the turn's sum and, when it took more than one request, how many ("· 3 requests"). */
function turnUsageText(usage: UsageView | undefined, requests: number | undefined): string {
  const count = requests !== undefined && requests > 1 ? `${formatCount(requests)} requests` : '';
  if (!usage) return count;
  return count ? `${usageText(usage)} · ${count}` : usageText(usage);
}

/** An assistant turn's whole text, as Copy gives it: each tool round's text, then the last reply. */
function fullText(view: TurnView): string {
  const parts = (view.steps ?? []).map((s) => s.text).filter((t) => /\S/.test(t));
  return [...parts, view.text].filter((t) => t !== '').join('\n\n');
}

function errorCard(error: ErrorView): HTMLElement {
  return h('div', { class: 'error-card', role: 'alert' },
    h('div', { class: 'error-title' }, error.title),
    error.detail ? h('div', { class: 'error-detail' }, textNodes(error.detail)) : null,
    error.hint ? h('div', { class: 'error-hint' }, error.hint) : null,
    error.actions.length ? h('div', { class: 'actions' }, ...error.actions.map((a, i) => actionButton(a, i === 0))) : null,
  );
}

/** Hooks the transcript gives each turn. */
export interface TurnHost {
  onBlock(el: HTMLElement): void;
  onOpenRendered(el: HTMLElement): void;
  thinkingChanged(): void;
  /** A new round of a tool-using reply starts streaming its text afresh. */
  streamRestarted(): void;
  /** A tool call waits for the reader's approval; its question was just built. */
  toolQuestion(question: HTMLElement, call: ToolCallView, steps: StepsView): void;
}

/** One transcript entry. The body may be a placeholder; `view` always holds the full state to rebuild it. */
export class TurnItem {
  readonly article: HTMLElement;
  private body: HTMLElement;
  rendered = false;
  /** Last measured (or estimated) body height, used while the body is a placeholder. */
  height: number;
  private stream?: MarkdownStream;
  /** The tool rounds before the streaming text, once the turn has any. */
  private stepsView?: StepsView;
  private chrome?: HTMLElement;
  private reasoningEl?: HTMLElement;
  private thinkingLabel?: HTMLElement;
  /** When thinking started (epoch ms) and, once known, how long it took. */
  private thinkingStart?: number;
  private thinkingMs?: number;
  /** A summary turn's usage, in its <summary> line; and whether the reader opened it (kept across renders). */
  private summaryUsage?: HTMLElement;
  private summaryOpen = false;
  private compacted = false;

  constructor(public view: TurnView, private readonly host: TurnHost) {
    const assistant = view.role === 'assistant';
    const who = isSummary(view) ? 'Summary' : assistant ? 'Parley' : 'You';
    this.body = h('div', { class: 'turn-body placeholder' });
    this.article = h('article', {
      class: `turn ${view.role}${isSummary(view) ? ' summary' : ''}`,
      'aria-label': who,
    },
      h('div', { class: 'turn-head', 'aria-hidden': 'true' },
        h('span', { class: 'turn-role' }, who),
        assistant && view.model ? h('span', { class: 'turn-model' }, view.model) : null),
      this.body);
    this.height = estimateHeight(view);
    this.thinkingStart = view.reasoningStartedAt;
    this.thinkingMs = view.reasoningMs;
    if (view.status !== 'streaming' && view.reasoning && this.thinkingMs === undefined) this.thinkingMs = 0;
    this.body.style.height = `${this.height}px`;
  }

  get streaming(): boolean {
    return this.view.status === 'streaming';
  }

  /** True while reasoning streams and no answer text has arrived: the elapsed time still counts. */
  get thinking(): boolean {
    return this.streaming && this.thinkingMs === undefined && !!this.view.reasoning;
  }

  /** Builds the body from `view`. */
  render(): void {
    if (this.rendered) return;
    this.rendered = true;
    this.body.classList.remove('placeholder');
    this.body.style.height = '';
    this.body.replaceChildren(...(isSummary(this.view) ? this.summaryParts() : this.view.role === 'assistant' ? this.assistantParts() : this.userParts()));
  }

  /** Marks a turn a later summary stands for: still shown, no longer sent to the model. */
  setCompacted(value: boolean): void {
    if (value === this.compacted) return;
    this.compacted = value;
    const a = this.article;
    a.classList.toggle('compacted', value);
    for (const attr of ['title', 'aria-description']) {
      if (value) a.setAttribute(attr, COMPACTED_WORDS);
      else a.removeAttribute(attr);
    }
  }

  /** The turn leaves the transcript: its reply, if still streaming, stops updating. */
  dispose(): void {
    this.stream?.dispose();
  }

  /** Replaces the body with an empty box of the same height. Never for a streaming turn. */
  unrender(): void {
    if (!this.rendered || this.streaming) return;
    if (this.article.contains(document.activeElement)) return;
    const height = this.body.getBoundingClientRect().height;
    if (height > 0) this.height = height;
    this.rendered = false;
    this.stream = undefined;
    this.stepsView = undefined;
    this.chrome = undefined;
    this.reasoningEl = undefined;
    this.thinkingLabel = undefined;
    this.summaryUsage = undefined;
    this.body.replaceChildren();
    this.body.classList.add('placeholder');
    this.body.style.height = `${this.height}px`;
  }

  /** New text or reasoning for a streaming reply. */
  delta(text?: string, reasoning?: string): void {
    if (reasoning) {
      this.view.reasoning = (this.view.reasoning ?? '') + reasoning;
      this.thinkingStart ??= Date.now();
      if (this.rendered) {
        if (!this.reasoningEl) this.rerender();
        else appendText(this.reasoningEl, reasoning);
      }
      this.host.thinkingChanged();
    }
    if (text) {
      if (this.thinking && this.thinkingStart !== undefined) {
        this.thinkingMs = Date.now() - this.thinkingStart;
        this.updateThinkingLabel();
        this.host.thinkingChanged();
      }
      this.view.text += text;
      this.stream?.append(text);
    }
  }

  /** The reply ended (or a turn was replaced): take the host's final state. */
  finish(turn: TurnView): void {
    this.view = turn;
    if (turn.reasoningMs !== undefined) this.thinkingMs = turn.reasoningMs;
    else if (turn.reasoning && this.thinkingMs === undefined) {
      this.thinkingMs = this.thinkingStart !== undefined ? Date.now() - this.thinkingStart : 0;
    }
    this.host.thinkingChanged();
    if (!this.rendered) return;
    this.updateThinkingLabel();
    // The host's final reasoning is the truth; deltas were a preview of it.
    if (this.reasoningEl && this.reasoningEl.textContent !== (turn.reasoning ?? '')) this.reasoningEl.replaceChildren(textNodes(turn.reasoning ?? ''));
    if (this.stream && !this.stream.isFinished) {
      this.showSteps();
      this.stream.finish(turn.text);
      this.renderChrome();
    } else {
      this.rerender();
    }
  }

  /**
   * The turn's tool rounds as they are now (turnSteps). When a round was added, its text moved into the last step
   * and the streaming text starts again from empty: the old stream ends (speaking its last sentences) and a fresh
   * one takes its place, to which later deltas append.
   */
  setSteps(steps: ToolStepView[]): void {
    const grew = steps.length > (this.view.steps?.length ?? 0);
    this.view.steps = steps;
    if (grew) this.view.text = '';
    if (!this.rendered) return;
    if (!this.streaming || !this.stream) {
      this.rerender();
      return;
    }
    if (grew) {
      const old = this.stream;
      if (!old.isFinished) old.finish(steps[steps.length - 1].text);
      old.el.replaceWith(this.newStream().el);
      old.dispose();
      this.host.streamRestarted();
    }
    this.showSteps();
  }

  /** Refreshes the elapsed-seconds label of a Thinking block. */
  updateThinkingLabel(): void {
    if (!this.thinkingLabel) return;
    const ms = this.thinkingMs ?? (this.thinkingStart !== undefined ? Date.now() - this.thinkingStart : 0);
    const seconds = Math.max(0, Math.round(ms / 1000));
    this.thinkingLabel.textContent = this.thinkingMs === undefined ? `Thinking… ${seconds} s` : `Thinking (${seconds} s)`;
  }

  private rerender(): void {
    this.rendered = false;
    this.render();
  }

  private assistantParts(): Node[] {
    const parts: Node[] = [];
    if (this.view.reasoning) parts.push(this.thinkingBlock());
    this.stepsView = undefined;
    if (this.view.steps?.length) parts.push(this.makeStepsView().el);
    this.stream?.dispose();
    this.chrome = h('div', { class: 'turn-chrome' });
    parts.push(this.newStream().el, this.chrome);
    this.renderChrome();
    return parts;
  }

  /**
   * A compaction summary: collapsed, its line saying what it stands for, with its usage; open, the summary as
   * Markdown. Its status and error stay outside, in view; it has Copy but no Regenerate or Continue.
   */
  private summaryParts(): Node[] {
    const n = this.view.summaryOf ?? 0;
    this.summaryUsage = h('span', { class: 'usage' });
    const parts = this.assistantParts();
    const chrome = parts.pop()!;
    const details = h('details', { class: 'summary-block', open: this.summaryOpen },
      h('summary', null,
        h('span', { class: 'summary-label' }, `Summary of ${formatCount(n)} earlier turn${n === 1 ? '' : 's'} (the model sees this instead of them)`),
        ' ', this.summaryUsage),
      ...parts);
    details.addEventListener('toggle', () => { this.summaryOpen = details.open; });
    return [details, chrome];
  }

  /** A MarkdownStream for the current `text` (streaming, with the transcript's hooks, or finished). */
  private newStream(): MarkdownStream {
    const stream = new MarkdownStream(this.view.text, this.streaming);
    // A summary streams into its collapsed block: nothing the reader sees, so nothing is read out.
    if (this.streaming && !isSummary(this.view)) {
      stream.onBlock = (el) => this.host.onBlock(el);
      stream.onOpenRendered = (el) => this.host.onOpenRendered(el);
    }
    this.stream = stream;
    return stream;
  }

  private makeStepsView(): StepsView {
    // Only a turn streaming now can have a call waiting for this window's answer; a stored one never asks.
    const view: StepsView = new StepsView({ questionShown: (q, call) => this.host.toolQuestion(q, call, view), live: () => this.view.status === 'streaming' && !this.view.elsewhere });
    view.update(this.view.steps ?? []);
    this.stepsView = view;
    return view;
  }

  /** Brings the rendered steps up to `view.steps`; the first steps of a turn go in just before its streaming text. */
  private showSteps(): void {
    if (this.stepsView) this.stepsView.update(this.view.steps ?? []);
    else if (this.view.steps?.length) this.stream?.el.before(this.makeStepsView().el);
  }

  private thinkingBlock(): HTMLElement {
    this.reasoningEl = h('div', { class: 'reasoning' }, textNodes(this.view.reasoning ?? ''));
    this.thinkingLabel = h('span', { class: 'thinking-label' });
    this.updateThinkingLabel();
    return h('details', { class: 'thinking' },
      h('summary', null, this.thinkingLabel),
      this.reasoningEl);
  }

  /** Error card, status badge, usage and per-turn buttons under an assistant reply. */
  private renderChrome(): void {
    const chrome = this.chrome;
    if (!chrome) return;
    const v = this.view;
    const summary = isSummary(v);
    const footer = h('div', { class: 'turn-footer' });
    const label = STATUS_LABELS[v.status];
    const title = v.status === 'stopped' && v.error?.kind === 'budget' ? 'A spend limit (parley.budget) stopped this reply.' : STATUS_TITLES[v.status];
    if (label) footer.append(h('span', { class: `badge status-${v.status}`, title: title ?? '' }, label));
    if ((v.status === 'truncated' || v.status === 'interrupted') && !summary) {
      footer.append(h('button', { type: 'button', class: 'btn small', onclick: () => post({ type: 'action', action: 'continue' }) }, 'Continue'));
    }
    const usage = turnUsageText(v.usage, v.requests);
    const usageTitle = v.usage ? `${formatCount(v.usage.prompt)} prompt + ${formatCount(v.usage.completion)} completion` : '';
    // A summary shows its usage on its collapsed block's line, not in the footer.
    if (summary) {
      if (this.summaryUsage) {
        this.summaryUsage.textContent = usage;
        this.summaryUsage.title = usageTitle;
      }
    } else if (usage) {
      footer.append(h('span', { class: 'usage', title: usageTitle }, usage));
    }
    if (!this.streaming) {
      footer.append(h('span', { class: 'turn-actions' },
        h('button', {
          type: 'button', class: 'link-btn', 'aria-label': summary ? 'Copy summary' : 'Copy reply',
          onclick: () => post({ type: 'copy', text: summary ? this.view.text : fullText(this.view) }),
        }, 'Copy'),
        summary ? null : h('button', { type: 'button', class: 'link-btn regen', 'aria-label': 'Regenerate reply', onclick: () => post({ type: 'regenerate' }) }, 'Regenerate')));
    }
    chrome.replaceChildren(...(v.error ? [errorCard(v.error)] : []), footer);
  }

  private userParts(): Node[] {
    const v = this.view;
    const parts: Node[] = [];
    if (v.note) parts.push(h('div', { class: 'turn-note' }, v.note));
    if (v.context?.length) {
      parts.push(h('ul', { class: 'chips', 'aria-label': 'Attached context' },
        ...v.context.map((c) => h('li', { class: 'chip', title: c.truncated ? 'Cut to the context limit' : '' },
          chipLabel(c), h('span', { class: 'chip-lang' }, c.language), c.truncated ? ' (cut)' : ''))));
    }
    if (v.images?.length) parts.push(h('div', { class: 'thumbs' }, ...v.images.map(thumbnail)));
    if (v.text) parts.push(h('div', { class: 'user-text' }, textNodes(v.text)));
    parts.push(h('div', { class: 'turn-footer' }, h('span', { class: 'turn-actions' },
      h('button', { type: 'button', class: 'link-btn', 'aria-label': 'Copy message', onclick: () => post({ type: 'copy', text: this.view.text }) }, 'Copy'),
      h('button', { type: 'button', class: 'link-btn edit', 'aria-label': 'Edit and resend', onclick: () => post({ type: 'editLast' }) }, 'Edit'))));
    return parts;
  }
}

/** A first guess at a body's height before it was ever rendered: about 60 characters per 20px line. */
function estimateHeight(view: TurnView): number {
  // A summary starts collapsed: its one line and its footer.
  if (isSummary(view)) return 60;
  let lines = 0;
  for (const para of fullText(view).split('\n')) lines += Math.max(1, Math.ceil(para.length / 60));
  const calls = (view.steps ?? []).reduce((n, s) => n + s.calls.length, 0);
  return 40 + Math.min(lines, 2000) * 20 + (view.images?.length ? 80 : 0) + calls * 30;
}
