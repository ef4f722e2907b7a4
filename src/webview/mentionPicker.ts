// The `@` picker: a listbox above the composer, driven from the textarea (a combobox) by keys, or by the mouse.
import type { ContextChip, MentionCandidate } from '../shared/protocol';
import { h } from './dom';
import { post } from './vscodeApi';

/** Queries typed in quick succession are sent once typing pauses this long (the first one at once). */
const QUERY_DELAY_MS = 80;
const LIST_ID = 'mention-list';

/** The `@query` the caret is in: `@` at the start or after whitespace, then no whitespace up to the caret. */
export function mentionQueryAt(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const at = before.lastIndexOf('@');
  if (at < 0 || (at > 0 && !/\s/.test(before[at - 1]))) return undefined;
  const query = before.slice(at + 1);
  if (/\s/.test(query) || query.length > 200) return undefined;
  return { start: at, query };
}

/** How a context chip reads: a mention not yet read by its name, a problems list by its file, code by its lines. */
export function chipLabel(c: ContextChip): string {
  if (c.mention && c.startLine === 0) return c.mention === 'file' ? c.path : `@${c.mention}`;
  if (c.mention === 'problems') return `Problems: ${c.path}`;
  return `${c.path}:${c.startLine}–${c.endLine}`;
}

/**
 * Opens when `@` is typed at the start or after a space (or from the composer's @ button), lists what the host sends
 * for the query, and picks with Enter, Tab or a click; the arrows move, Escape closes. The typed `@query` goes with the pick.
 * Enter and Tab pick only from the answer to the query now typed: while it is pending they do nothing.
 */
export class MentionPicker {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  private items: MentionCandidate[] = [];
  private active = 0;
  private at: { start: number; query: string } | undefined;
  private asked: string | undefined;
  /** The host has answered the query shown. */
  private answered = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly input: HTMLTextAreaElement, private readonly onPick: (c: MentionCandidate) => void) {
    this.list = h('ul', { id: LIST_ID, class: 'mention-list', role: 'listbox', 'aria-label': 'Mention a file or context' });
    this.empty = h('div', { class: 'mention-empty' });
    this.el = h('div', { class: 'mention-picker hidden' }, this.list, this.empty);
    // The textarea stays focused: it is the combobox, and the active option is named by aria-activedescendant.
    input.setAttribute('role', 'combobox');
    input.setAttribute('aria-autocomplete', 'list');
    input.setAttribute('aria-haspopup', 'listbox');
    input.setAttribute('aria-controls', LIST_ID);
    input.setAttribute('aria-expanded', 'false');
    input.addEventListener('blur', () => this.close());
    input.addEventListener('click', () => this.update());
    input.addEventListener('keyup', (e) => {
      if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) this.update();
    });
  }

  get isOpen(): boolean {
    return this.at !== undefined;
  }

  /** The draft or the caret changed: opens, follows or closes the picker. */
  update(): void {
    const found = mentionQueryAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (!found) return this.close();
    const opening = !this.at;
    this.at = found;
    if (opening) {
      this.items = [];
      this.render();
      this.el.classList.remove('hidden');
      this.input.setAttribute('aria-expanded', 'true');
    }
    this.ask(found.query, opening);
  }

  /** The composer's @ button: types `@` at the caret (after a space when needed) and opens. */
  openFromButton(): void {
    const { value } = this.input;
    const caret = this.input.selectionStart ?? value.length;
    const lead = caret > 0 && !/\s/.test(value[caret - 1]) ? ' ' : '';
    this.input.value = value.slice(0, caret) + lead + '@' + value.slice(caret);
    this.input.focus();
    const at = caret + lead.length + 1;
    this.input.setSelectionRange(at, at);
    this.input.dispatchEvent(new Event('input'));
  }

  /** The host's entries for a query; those for a query no longer typed are ignored. */
  setCandidates(query: string, items: MentionCandidate[]): void {
    if (!this.at || query !== this.at.query) return;
    this.items = items;
    this.answered = true;
    this.active = 0;
    this.render();
  }

  /** Keys while open: true when the picker used the key (the composer must not also act on it). */
  onKeyDown(e: KeyboardEvent): boolean {
    if (!this.at || e.isComposing) return false;
    const n = this.items.length;
    switch (e.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        if (n === 0) return false;
        this.active = (this.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
        this.render();
        break;
      case 'Enter':
      case 'Tab':
        if (e.shiftKey) return false;
        // While the answer to the query now typed is pending, the list shown is for an older query: Enter neither
        // picks from it nor sends the draft (the @query is still being typed); it waits for the answer.
        if (!this.answered) break;
        if (n === 0) return false;
        this.pick(this.active);
        break;
      case 'Escape':
        this.close();
        break;
      default:
        return false;
    }
    e.preventDefault();
    e.stopPropagation();
    return true;
  }

  close(): void {
    clearTimeout(this.timer);
    if (!this.at) return;
    this.at = undefined;
    this.asked = undefined;
    this.items = [];
    this.el.classList.add('hidden');
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
    this.list.replaceChildren();
  }

  private ask(query: string, now: boolean): void {
    if (query === this.asked) return;
    this.asked = query;
    this.answered = false;
    this.list.setAttribute('aria-busy', 'true');
    clearTimeout(this.timer);
    if (now) post({ type: 'mentionQuery', query });
    else this.timer = setTimeout(() => post({ type: 'mentionQuery', query }), QUERY_DELAY_MS);
  }

  /** Takes the typed `@query` out of the draft and hands the pick on. */
  private pick(i: number): void {
    const item = this.items[i];
    const at = this.at;
    if (!item || !at || !this.answered) return;
    const { value } = this.input;
    const end = this.input.selectionStart ?? value.length;
    this.input.value = value.slice(0, at.start) + value.slice(end);
    this.input.setSelectionRange(at.start, at.start);
    this.close();
    this.input.dispatchEvent(new Event('input'));
    this.onPick(item);
  }

  private render(): void {
    this.list.replaceChildren(...this.items.map((item, i) => h('li', {
      id: `mention-option-${i}`, class: i === this.active ? 'mention-option active' : 'mention-option', role: 'option',
      'aria-selected': String(i === this.active),
      // Keeps the focus in the textarea, so the click neither closes the picker nor loses the draft's caret.
      onmousedown: (e) => e.preventDefault(),
      onclick: () => this.pick(i),
    }, h('span', { class: 'mention-label' }, item.label), item.detail ? h('span', { class: 'mention-detail' }, item.detail) : null)));
    if (this.items.length) {
      this.input.setAttribute('aria-activedescendant', `mention-option-${this.active}`);
      this.list.children[this.active]?.scrollIntoView({ block: 'nearest' });
    } else this.input.removeAttribute('aria-activedescendant');
    this.list.setAttribute('aria-busy', String(!this.answered));
    this.empty.textContent = this.answered && !this.items.length ? 'Nothing matches: files are matched by their path' : '';
  }
}
