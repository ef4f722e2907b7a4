// The header's context meter: how full the model's window will be with the next request, and its Compact button.
import type { ContextMeterView } from '../shared/protocol';
import { formatCount, h } from './dom';
import { post } from './vscodeApi';

/** Percent of the window at which the meter warns when Parley never compacts on its own (threshold 0). */
const WARN_PERCENT = 85;
/** Percent of the window from which the Compact button shows (when there is something to compact). */
const COMPACT_FROM_PERCENT = 50;

const UNKNOWN_WINDOW_TITLE = 'Context window unknown: the server does not report it; set parley.contextWindow, or contextWindow for this model in the profile';

const SOURCE_WORDS: Record<NonNullable<ContextMeterView['windowSource']>, string> = {
  server: 'Window: from the server\'s model list',
  profile: 'Window: from the profile\'s contextWindow setting',
};

/** The tooltip's lines for the rule files of the last request: each file's tokens, or why it was not sent. */
export function ruleLines(meter: ContextMeterView): string[] {
  const rules = meter.rules ?? [];
  if (rules.length === 0) return [];
  const sent = rules.reduce((n, r) => n + r.tokens, 0);
  return [
    `Rules: ${formatCount(sent)} tokens`,
    ...rules.map((r) => `  ${r.path}: ${r.note === 'not allowed' ? 'not sent (not allowed)'
      : r.note === 'over' ? 'not sent (past 48,000 characters of rules)' : r.note === 'off' ? 'off for this conversation' : `${formatCount(r.tokens)} tokens${r.note === 'cut' ? ' (cut at 16,000 characters)' : ''}`}`),
  ];
}

/** A token count in a few characters: 950, 3.2k, 32.8k, 128k, 1M. */
function shortCount(n: number): string {
  const v = Math.max(0, Math.round(n));
  const trim = (s: string) => s.replace(/\.0$/, '');
  if (v < 1000) return String(v);
  if (v < 99_950) return `${trim((v / 1000).toFixed(1))}k`;
  if (v < 999_500) return `${Math.round(v / 1000)}k`;
  return `${trim((v / 1e6).toFixed(1))}M`;
}

/**
 * Built once and updated in place, so that a `meter` message leaves the rest of the header (and the focus, if it is
 * on the Compact button) alone. The gauge is a role="meter" while the window is known; unknown, it is a text image.
 */
export class ContextMeter {
  readonly el: HTMLElement;
  private readonly gauge: HTMLElement;
  private readonly fill: HTMLElement;
  private readonly tools: HTMLElement;
  private readonly reserve: HTMLElement;
  private readonly text: HTMLElement;
  private readonly compact: HTMLButtonElement;
  private readonly rules: HTMLButtonElement;

  constructor() {
    this.tools = h('span', { class: 'meter-tools' });
    this.fill = h('span', { class: 'meter-fill' }, this.tools);
    this.reserve = h('span', { class: 'meter-reserve' });
    this.text = h('span', { class: 'meter-text' });
    this.gauge = h('div', { class: 'meter-gauge' }, h('span', { class: 'meter-bar' }, this.fill, this.reserve), this.text);
    this.compact = h('button', {
      type: 'button', class: 'btn secondary small compact-btn hidden',
      onclick: () => post({ type: 'action', action: 'compact' }),
    }, 'Compact');
    this.rules = h('button', {
      type: 'button', class: 'btn secondary small rules-btn hidden',
      onclick: () => post({ type: 'action', action: 'rules' }),
    }, 'Rules');
    this.el = h('div', { class: 'context-meter hidden' }, this.gauge, this.rules, this.compact);
  }

  /** Shows `meter`, or hides the meter while there is none (the endpoint is not ready). */
  update(meter: ContextMeterView | undefined): void {
    this.el.classList.toggle('hidden', !meter);
    if (!meter) return;
    this.updateRules(meter);
    const { used, window, reserve } = meter;
    const g = this.gauge;
    if (window === undefined || window <= 0) {
      this.el.dataset.state = 'unknown';
      this.text.textContent = `${shortCount(used)} / ?`;
      for (const a of ['aria-valuemin', 'aria-valuemax', 'aria-valuenow', 'aria-valuetext']) g.removeAttribute(a);
      g.setAttribute('role', 'img');
      g.setAttribute('aria-label', `Context: ${formatCount(used)} tokens, window unknown`);
      g.title = [UNKNOWN_WINDOW_TITLE, ...ruleLines(meter), ...(meter.windowNotes ?? [])].join('\n');
      this.compact.classList.add('hidden');
      return;
    }
    const percent = (used / window) * 100;
    const shown = Math.round(percent);
    const over = used + reserve > window;
    const warnAt = meter.threshold > 0 ? meter.threshold : WARN_PERCENT;
    this.el.dataset.state = over ? 'error' : percent >= warnAt ? 'warning' : 'normal';
    this.fill.style.width = `${Math.min(100, percent)}%`;
    // The tool definitions' part of the prompt, at the start of its bar.
    const tools = meter.tools;
    this.tools.style.width = `${tools && used > 0 ? Math.min(100, (tools.tokens / used) * 100) : 0}%`;
    this.reserve.style.width = `${Math.max(0, Math.min(100 - percent, (reserve / window) * 100))}%`;
    this.text.textContent = `${shortCount(used)} / ${shortCount(window)}`;
    g.setAttribute('role', 'meter');
    g.setAttribute('aria-label', 'Context window');
    g.setAttribute('aria-valuemin', '0');
    g.setAttribute('aria-valuemax', String(window));
    g.setAttribute('aria-valuenow', String(Math.min(used, window)));
    g.setAttribute('aria-valuetext', `Context ${shown} % full, ${formatCount(used)} of ${formatCount(window)} tokens`
      + (tools ? `, tools ${formatCount(tools.tokens)}` : '')
      + (over ? `; no room left for the reply's ${formatCount(reserve)} tokens` : ''));
    g.title = [
      `Context: ${formatCount(used)} of ${formatCount(window)} tokens (${shown} %)`,
      `Reserved for the reply: ${formatCount(reserve)} tokens`,
      tools ? `Tool definitions: ${formatCount(tools.tokens)} tokens (${Math.round((tools.tokens / window) * 100)} %), ${tools.sent} of ${tools.offered} tools`
        + (tools.short ? ', in short form: at most a quarter of the room for the prompt' : '') : '',
      ...ruleLines(meter),
      meter.corrected ? 'Tokens: estimate corrected by the server\'s last count' : 'Tokens: a pure estimate (no count from the server yet)',
      ...(meter.windowNotes ?? [meter.windowSource ? SOURCE_WORDS[meter.windowSource] : 'Window: source not reported']),
      meter.threshold > 0 ? `Parley compacts on its own past ${meter.threshold} %` : 'Parley does not compact on its own',
      meter.serverWindow !== undefined && used >= meter.serverWindow
        ? 'The prompt is larger than the window the server runs: it will not be sent. Compact, or start a new chat.'
        : over ? 'The prompt and the reply\'s reserve do not fit in the window: compact, or start a new chat.' : '',
    ].filter(Boolean).join('\n');
    const n = meter.compactable;
    this.compact.classList.toggle('hidden', !(n > 0 && percent >= COMPACT_FROM_PERCENT));
    this.compact.title = `Summarize the ${formatCount(n)} oldest turn${n === 1 ? '' : 's'} to free room; they stay visible here`;
  }

  /** The Rules button: shown while rule files applied to the last question; it opens the host's list to turn them off or on. */
  private updateRules(meter: ContextMeterView): void {
    const rules = meter.rules ?? [];
    const on = rules.filter((r) => r.tokens > 0).length;
    this.rules.classList.toggle('hidden', rules.length === 0);
    this.rules.textContent = `Rules ${on}/${rules.length}`;
    this.rules.title = `${ruleLines(meter).join('\n')}\nChoose which rule files go with this conversation`;
    this.rules.setAttribute('aria-label', `Rules: ${on} of ${rules.length} rule files sent, ${formatCount(rules.reduce((n, r) => n + r.tokens, 0))} tokens. Choose which go with this conversation`);
  }
}
