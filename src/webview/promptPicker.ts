// The `/` picker: the prompt files, listed when `/` is typed at the start of the composer, picked by keys or the mouse.
import type { PromptCandidate } from '../shared/protocol';
import { h } from './dom';
import { post } from './vscodeApi';

const LIST_ID = 'prompt-list';

/**
 * The `/query` at the start of the draft that the caret is in (no whitespace between the `/` and the caret). A second
 * `/` makes it a path (`/usr/bin/…`), which no prompt file's name holds: no query.
 */
export function promptQueryAt(text: string, caret: number): string | undefined {
  return /^\/([^\s/]*)$/.exec(text.slice(0, caret))?.[1];
}

/** A draft that runs a prompt file: `/name` at the start, then its arguments. */
export function promptCall(text: string): { name: string; args: string } | undefined {
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return m ? { name: m[1], args: m[2] ?? '' } : undefined;
}

/**
 * Opens when `/` is typed at the start of the composer, asks the host for the prompt files once per opening and lists
 * those whose name holds what is typed; Enter, Tab or a click puts `/name ` in the draft for its arguments, the arrows
 * move, Escape closes. Like the `@` picker, the textarea stays focused as the combobox.
 */
export class PromptPicker {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  /** Every prompt file the host listed last: a draft `/name …` for one of them is run as that prompt file. */
  private all: PromptCandidate[] = [];
  private shown: PromptCandidate[] = [];
  private active = 0;
  private query: string | undefined;
  private answered = false;

  constructor(private readonly input: HTMLTextAreaElement) {
    this.list = h('ul', { id: LIST_ID, class: 'mention-list', role: 'listbox', 'aria-label': 'Prompt files' });
    this.empty = h('div', { class: 'mention-empty' });
    this.el = h('div', { class: 'mention-picker prompt-picker hidden' }, this.list, this.empty);
    input.addEventListener('blur', () => this.close());
  }

  get isOpen(): boolean {
    return this.query !== undefined;
  }

  /** The prompt file a draft runs, when its `/name` is one the host listed. */
  callIn(text: string): { name: string; args: string } | undefined {
    const call = promptCall(text);
    return call && this.all.some((p) => p.name === call.name) ? call : undefined;
  }

  /** The draft or the caret changed: opens, filters or closes the picker. */
  update(): void {
    const query = promptQueryAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (query === undefined) return this.close();
    if (this.query === undefined) {
      this.answered = false;
      this.el.classList.remove('hidden');
      this.input.setAttribute('aria-controls', LIST_ID);
      this.input.setAttribute('aria-expanded', 'true');
      post({ type: 'promptQuery' });
    }
    this.query = query;
    this.filter();
  }

  /** The host's prompt files. */
  setCandidates(items: PromptCandidate[]): void {
    this.all = items;
    this.answered = true;
    if (this.query !== undefined) this.filter();
  }

  /** Keys while open: true when the picker used the key (the composer must not also act on it). */
  onKeyDown(e: KeyboardEvent): boolean {
    if (this.query === undefined || e.isComposing) return false;
    const n = this.shown.length;
    if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && n) {
      this.active = (this.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
      this.render();
    } else if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey && (n || !this.answered)) {
      // Until the host answers, Enter waits rather than send `/…` as a question.
      this.pick(this.active);
    } else if (e.key === 'Escape') this.close();
    else return false;
    e.preventDefault();
    e.stopPropagation();
    return true;
  }

  close(): void {
    if (this.query === undefined) return;
    this.query = undefined;
    this.shown = [];
    this.el.classList.add('hidden');
    this.input.setAttribute('aria-expanded', 'false');
    this.input.setAttribute('aria-controls', 'mention-list');
    this.input.removeAttribute('aria-activedescendant');
    this.list.replaceChildren();
  }

  private filter(): void {
    const q = (this.query ?? '').toLowerCase();
    this.shown = this.all.filter((p) => p.name.toLowerCase().includes(q)).sort((a, b) => Number(!a.name.toLowerCase().startsWith(q)) - Number(!b.name.toLowerCase().startsWith(q)));
    this.active = 0;
    this.render();
  }

  /** Puts `/name ` in place of the typed `/query`, the caret after it, ready for the arguments. */
  private pick(i: number): void {
    const item = this.shown[i];
    if (!item) return;
    const { value } = this.input;
    const end = this.input.selectionStart ?? value.length;
    const rest = value.slice(end).replace(/^\S*/, '');
    const head = `/${item.name} `;
    this.input.value = head + rest.replace(/^\s+/, '');
    this.input.setSelectionRange(head.length, head.length);
    this.close();
    this.input.dispatchEvent(new Event('input'));
  }

  private render(): void {
    this.list.replaceChildren(...this.shown.map((item, i) => h('li', {
      id: `prompt-option-${i}`, class: i === this.active ? 'mention-option active' : 'mention-option', role: 'option',
      'aria-selected': String(i === this.active), title: item.source,
      onmousedown: (e) => e.preventDefault(),
      onclick: () => this.pick(i),
    }, h('span', { class: 'mention-label' }, `/${item.name}`),
    item.description ? h('span', { class: 'mention-detail' }, item.description) : null,
    item.hint ? h('span', { class: 'mention-detail prompt-hint' }, item.hint) : null)));
    if (this.shown.length) {
      this.input.setAttribute('aria-activedescendant', `prompt-option-${this.active}`);
      this.list.children[this.active]?.scrollIntoView({ block: 'nearest' });
    } else this.input.removeAttribute('aria-activedescendant');
    this.list.setAttribute('aria-busy', String(!this.answered));
    this.empty.textContent = !this.answered ? '' : this.all.length === 0
      ? 'No prompt files: add .github/prompts/<name>.prompt.md, or set parley.prompts.userFolder'
      : this.shown.length ? '' : 'No prompt file has that name';
  }
}
