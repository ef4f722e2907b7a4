// The panel's fixed parts around the transcript: header (with the context meter), setup card, notice bar and history view.
import type { ActionId, ContextMeterView, HeaderView, HistoryItem, SetupView } from '../shared/protocol';
import { ContextMeter } from './contextMeter';
import { append, h, icon } from './dom';
import { ACTION_LABELS, actionButton } from './turn';
import { post } from './vscodeApi';

/**
 * Profile switcher (with two or more profiles), model picker, reasoning effort (where offered), endpoint, demo badge,
 * New chat and History buttons, and the context meter on a line of its own. Only the profile, model and effort part is
 * rebuilt on each render; the buttons and the meter stay, and a control of that part that had the focus has it again
 * after a render.
 */
export class Header {
  readonly el: HTMLElement;
  private readonly main = h('div', { class: 'header-main' });
  private readonly meter = new ContextMeter();

  constructor(onHistory: () => void) {
    this.el = h('header', { class: 'header' },
      this.main,
      h('div', { class: 'header-buttons' },
        h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'New chat', title: 'New chat', onclick: () => post({ type: 'newChat' }) }, icon('plus')),
        h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'History', title: 'History', onclick: onHistory }, icon('history'))),
      this.meter.el);
  }

  render(header: HeaderView): void {
    const active = document.activeElement;
    const focusKey = active instanceof HTMLElement && this.main.contains(active) ? active.dataset.key : undefined;
    const profiles = profileSelect(header);
    this.main.replaceChildren();
    append(this.main, [
      profiles,
      modelControl(header),
      effortSelect(header),
      header.demo ? h('span', { class: 'badge demo', title: 'Pointed at the local demo endpoint started by npm start' }, 'Demo endpoint') : null,
      // With a profile switcher, the endpoint's host is the switcher's tooltip.
      profiles ? null : h('span', { class: 'endpoint', title: `Endpoint: ${header.endpoint}` }, header.endpoint)]);
    if (focusKey) this.main.querySelector<HTMLElement>(`[data-key="${focusKey}"]`)?.focus();
  }

  /** The context meter (a `meter` message: the header's render leaves it alone). */
  setMeter(meter: ContextMeterView | undefined): void {
    this.meter.update(meter);
  }
}

/** One option of a header select: its value, shown as is, and a tooltip. */
interface Choice {
  value: string;
  title?: string;
}

/**
 * A native select of `choices` with `current` selected. A current value the list lacks (a setting naming a profile
 * or model the list does not have) goes first, so the select still shows what is in use; an empty one (no model
 * set) does not.
 */
function choiceSelect(attrs: Record<string, string>, choices: Choice[], current: Choice, onchange: (value: string) => void, label = (value: string) => value): HTMLSelectElement {
  const all = current.value && !choices.some((c) => c.value === current.value) ? [current, ...choices] : choices;
  const select = h('select', { ...attrs, onchange: () => onchange(select.value) },
    ...all.map((c) => h('option', { value: c.value, title: c.title, selected: c.value === current.value }, label(c.value))));
  return select;
}

/** The profile switcher: a native select (two clicks to switch), only when there is more than one profile. */
function profileSelect(header: HeaderView): HTMLSelectElement | undefined {
  if (header.profiles.length < 2) return undefined;
  return choiceSelect(
    { class: 'profile-select', 'aria-label': 'Endpoint profile', 'data-key': 'profile', title: `Endpoint: ${header.endpoint}` },
    header.profiles.map((p) => ({ value: p.name, title: p.endpoint })),
    { value: header.profile, title: header.endpoint },
    (name) => post({ type: 'setProfile', name }));
}

/** A select of the server's models when it listed them; otherwise a button that asks the host to pick one. */
function modelControl(header: HeaderView): HTMLElement {
  if (header.models.length) {
    return choiceSelect({ class: 'model-select', 'aria-label': 'Model', 'data-key': 'model' },
      header.models.map((m) => ({ value: m })), { value: header.model }, (model) => post({ type: 'setModel', model }));
  }
  return h('button', {
    type: 'button', class: 'model-btn', 'aria-label': `Model: ${header.model || 'not set'}. Change model`, 'data-key': 'model',
    title: 'Change model', onclick: () => post({ type: 'pickModel' }),
  }, h('span', { class: 'model-name' }, header.model || 'Choose a model'), h('span', { class: 'caret', 'aria-hidden': 'true' }, '▾'));
}

/**
 * The reasoning effort, when the host offers it for the model: "default" (none sent: the server's own) and the offered
 * words, as the server or the profile writes them (text, never markup). For this conversation; the host remembers it
 * for the model.
 */
function effortSelect(header: HeaderView): HTMLSelectElement | undefined {
  const effort = header.effort;
  if (!effort) return undefined;
  return choiceSelect(
    { class: 'effort-select', 'aria-label': 'Reasoning effort', 'data-key': 'effort', title: 'Reasoning effort: how much the model thinks before it answers' },
    [{ value: '', title: "The server's default: no effort is sent" }, ...effort.options.map((value) => ({ value }))],
    { value: effort.value },
    (value) => post({ type: 'setEffort', effort: value }),
    (value) => value || 'default',
  );
}

/** The first-run card: why it shows, presets, key and connection buttons. */
export function setupCard(setup: SetupView): HTMLElement {
  const actions = setup.actions.filter((a) => a !== 'testConnection');
  return h('section', { class: 'setup-card', 'aria-labelledby': 'setup-title' },
    h('h2', { id: 'setup-title' }, 'Set up Parley'),
    h('p', { class: 'setup-reason' }, setup.reason),
    h('p', { class: 'setup-hint' }, 'Choose a server. Presets fill in the base URL and model; local servers need no key.'),
    h('div', { class: 'presets', role: 'group', 'aria-label': 'Presets' },
      ...setup.presets.map((p) => h('button', {
        type: 'button', class: 'btn secondary preset', title: p.baseUrl ? `${p.baseUrl} · ${p.model}` : 'Enter your own base URL and model',
        onclick: () => post({ type: 'applyPreset', id: p.id }),
      }, p.label, p.needsKey ? null : h('span', { class: 'preset-local' }, ' (no key)')))),
    actions.length ? h('div', { class: 'actions' }, ...actions.map((a, i) => actionButton(a, i === 0))) : null,
    setup.actions.includes('testConnection')
      ? h('p', null, h('button', { type: 'button', class: 'link-btn', onclick: () => post({ type: 'action', action: 'testConnection' }) }, 'Test Connection'))
      : null,
    h('p', { class: 'setup-hint' }, 'Ghost text as you type: set parley.completion.model to a coder model of the server, such as qwen2.5-coder:1.5b-base. Off until then.'),
  );
}

/** A dismissable line above the composer, with optional action buttons. */
export function noticeBar(text: string, actions: ActionId[] | undefined, dismiss: () => void): HTMLElement {
  return h('div', { class: 'notice', role: 'status' },
    h('span', { class: 'notice-text' }, text),
    ...(actions ?? []).map((a) => h('button', { type: 'button', class: 'btn secondary small', onclick: () => post({ type: 'action', action: a }) }, ACTION_LABELS[a])),
    h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Dismiss notice', onclick: dismiss }, icon('close')));
}

/** A damaged conversation file in the history list: it cannot be opened as a chat, only as text (Open raw) or deleted. */
function damagedRow(item: HistoryItem): HTMLElement {
  return h('li', { class: 'history-item damaged' },
    h('span', { class: 'history-open', title: `Not a readable conversation; moved aside ${new Date(item.updatedAt).toLocaleString()}` },
      h('span', { class: 'history-title' }, 'Damaged file'),
      h('span', { class: 'history-meta' }, `${item.id}.corrupt.json`)),
    h('button', { type: 'button', class: 'btn secondary small', 'aria-label': `Open raw ${item.id}.corrupt.json`, onclick: () => post({ type: 'openRaw', id: item.id }) }, 'Open raw'),
    h('button', { type: 'button', class: 'btn secondary small', 'aria-label': `Delete ${item.id}.corrupt.json`, onclick: () => post({ type: 'deleteDamaged', id: item.id }) }, 'Delete'));
}

/** The history list: open or delete a conversation, clear all after a confirm step. */
export class HistoryView {
  readonly el = h('section', { class: 'history hidden', 'aria-label': 'Chat history' });
  private confirming = false;
  private items: HistoryItem[] = [];

  constructor(private readonly close: () => void) {}

  get visible(): boolean {
    return !this.el.classList.contains('hidden');
  }

  show(items: HistoryItem[]): void {
    this.items = items;
    this.confirming = false;
    const wasHidden = !this.visible;
    this.el.classList.remove('hidden');
    this.render();
    if (wasHidden) this.el.querySelector<HTMLElement>('button')?.focus();
  }

  hide(): void {
    this.el.classList.add('hidden');
  }

  private render(): void {
    const back = h('button', { type: 'button', class: 'btn secondary small', onclick: this.close }, 'Back to chat');
    const clear = this.confirming
      ? h('span', { class: 'confirm' },
          h('span', null, 'Delete all conversations? '),
          h('button', { type: 'button', class: 'btn danger small', onclick: () => { post({ type: 'clearHistory' }); this.confirming = false; this.render(); } }, 'Delete all'),
          h('button', { type: 'button', class: 'btn secondary small', onclick: () => { this.confirming = false; this.render(); } }, 'Cancel'))
      : h('button', {
          type: 'button', class: 'btn secondary small', disabled: this.items.length === 0,
          onclick: () => { this.confirming = true; this.render(); this.el.querySelector<HTMLElement>('.danger')?.focus(); },
        }, 'Clear all…');
    const list = this.items.length
      ? h('ul', { class: 'history-list' }, ...this.items.map((item) => item.damaged ? damagedRow(item) : h('li', { class: 'history-item' },
          h('button', {
            type: 'button', class: 'history-open', title: item.title,
            onclick: () => { post({ type: 'openConversation', id: item.id }); this.close(); },
          }, h('span', { class: 'history-title' }, item.title || 'Untitled'),
            h('span', { class: 'history-meta' }, `${new Date(item.updatedAt).toLocaleString()} · ${item.turnCount} messages`)),
          h('button', {
            type: 'button', class: 'icon-btn', 'aria-label': `Delete ${item.title || 'conversation'}`, title: 'Delete',
            onclick: () => post({ type: 'deleteConversation', id: item.id }),
          }, icon('close')))))
      : h('p', { class: 'history-empty' }, 'No saved conversations yet.');
    this.el.replaceChildren(h('div', { class: 'history-bar' }, h('h2', null, 'History'), back, clear), list);
  }
}
