// The composer: draft text, Send/Stop, attached images (button, paste, drop), context chips, the `@` and `/` pickers.
import { IMAGE_MIME_TYPES, LIMITS, type ContextChip, type ImageView, type MentionCandidate, type PromptCandidate } from '../shared/protocol';
import { h, icon } from './dom';
import { MentionPicker, chipLabel } from './mentionPicker';
import { PromptPicker } from './promptPicker';
import { thumbnail } from './turn';
import { loadState, post, saveState } from './vscodeApi';

const MB = 1024 * 1024;

/** Up to this much image data (as data-URL characters) is kept with the draft across a rebuilt view. */
const DRAFT_IMAGES_CHARS = 12 * 1024 * 1024;
/** While images are attached, the draft is saved this long after the last keystroke rather than on each one. */
const DRAFT_SAVE_DELAY_MS = 300;

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  /** The tools switch: shown only when tools are available; aria-pressed says whether they are on. */
  private readonly toolsButton: HTMLButtonElement;
  private toolsEnabled = false;
  private readonly thumbs: HTMLElement;
  private readonly chips: HTMLElement;
  private readonly error: HTMLElement;
  private readonly picker: MentionPicker;
  private readonly prompts: PromptPicker;
  private images: ImageView[] = [];
  private draftTimer: ReturnType<typeof setTimeout> | undefined;
  private generating = false;
  /** What was last sent, put back if the host refuses it (composerError) while the composer is empty. */
  private lastSent?: { text: string; images: ImageView[] };

  constructor() {
    this.input = h('textarea', {
      class: 'input', rows: '1', 'aria-label': 'Message Parley',
      placeholder: 'Ask Parley… (Enter to send, Shift+Enter for a new line)',
      oninput: () => this.onInput(),
      onkeydown: (e) => this.onKeyDown(e as KeyboardEvent),
      onpaste: (e) => this.onPaste(e as ClipboardEvent),
    });
    const saved = loadState();
    this.input.value = saved.draft ?? '';
    // Checked again: state is ours, but a thumbnail only ever shows an image data URL.
    if (Array.isArray(saved.images)) {
      this.images = saved.images.filter((i) => typeof i?.name === 'string' && typeof i?.dataUrl === 'string').slice(0, LIMITS.maxImages);
    }
    this.sendButton = h('button', { type: 'button', class: 'send', onclick: () => this.onSendClick() });
    this.thumbs = h('div', { class: 'thumbs composer-thumbs', 'aria-label': 'Attached images', role: 'list' });
    this.chips = h('ul', { class: 'chips composer-chips', 'aria-label': 'Context to send' });
    this.error = h('div', { class: 'composer-error', role: 'alert' });
    this.picker = new MentionPicker(this.input, (c) => post({ type: 'addMention', kind: c.kind, ...(c.path !== undefined ? { path: c.path } : {}) }));
    this.prompts = new PromptPicker(this.input);
    const mention = h('button', {
      type: 'button', class: 'icon-btn mention-btn', 'aria-label': 'Add context (@)',
      title: 'Add context: a workspace file, @selection, @problems or @open (or type @)',
      onclick: () => this.picker.openFromButton(),
    }, icon('at'));
    const attach = h('button', {
      type: 'button', class: 'icon-btn', 'aria-label': 'Attach image', title: 'Attach image (PNG, JPEG, GIF, WebP)',
      onclick: () => post({ type: 'pickImage' }),
    }, icon('image'));
    this.toolsButton = h('button', {
      type: 'button', class: 'icon-btn tools-btn hidden', 'aria-label': 'Use tools', 'aria-pressed': 'false',
      onclick: () => {
        this.setTools(!this.toolsEnabled, true);
        post({ type: 'setTools', enabled: this.toolsEnabled });
      },
    }, icon('tools'));
    this.el = h('div', { class: 'composer' },
      this.picker.el, this.prompts.el, this.chips, this.thumbs, this.error,
      h('div', { class: 'composer-row' }, this.input, h('div', { class: 'composer-buttons' }, this.toolsButton, mention, attach, this.sendButton)));
    this.el.addEventListener('dragover', (e) => {
      if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
    });
    this.el.addEventListener('drop', (e) => {
      if (!e.dataTransfer?.files.length) return;
      e.preventDefault();
      this.addFiles([...e.dataTransfer.files]);
    });
    this.setGenerating(false);
    this.renderChips([]);
    this.renderThumbs();
  }

  setGenerating(value: boolean): void {
    this.generating = value;
    this.sendButton.replaceChildren(icon(value ? 'stop' : 'send'));
    this.sendButton.setAttribute('aria-label', value ? 'Stop' : 'Send');
    this.sendButton.title = value ? 'Stop (Escape)' : 'Send (Enter)';
    this.sendButton.classList.toggle('stop', value);
  }

  /** The host's word on tools for this conversation (`tools`); the switch shows only when they are available. */
  setTools(enabled: boolean, available: boolean): void {
    this.toolsEnabled = enabled;
    const b = this.toolsButton;
    b.setAttribute('aria-pressed', String(enabled));
    b.title = enabled
      ? 'Tools on: the model may read files, search and look at diagnostics in this workspace. Click to turn off for this conversation.'
      : 'Tools off for this conversation. Click to let the model read files, search and look at diagnostics.';
    b.classList.toggle('hidden', !available);
  }

  /** Puts a question back in the composer (Edit last question), with its images, and focuses it. */
  setText(text: string, images: ImageView[] = []): void {
    this.images = images.slice(0, LIMITS.maxImages);
    this.renderThumbs();
    this.input.value = text;
    this.onInput(); // saves the draft, images included
    this.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  focus(): void {
    this.input.focus();
  }

  /** Shows why input was refused; `fromHost` puts back what was sent when the composer is still empty. */
  showError(text: string, fromHost = false): void {
    this.error.textContent = text;
    if (fromHost && this.lastSent && !this.input.value && !this.images.length) {
      this.input.value = this.lastSent.text;
      this.images = this.lastSent.images;
      this.imagesChanged();
    }
    this.lastSent = undefined;
  }

  /** The host sent a user turn: what was sent arrived. */
  accepted(): void {
    this.lastSent = undefined;
  }

  addImage(image: ImageView): void {
    if (this.images.length >= LIMITS.maxImages) {
      this.showError(`At most ${LIMITS.maxImages} images per message.`);
      return;
    }
    this.images.push(image);
    this.imagesChanged();
  }

  /** The host's entries for the `@` picker. */
  mentionCandidates(query: string, items: MentionCandidate[]): void {
    this.picker.setCandidates(query, items);
  }

  /** The host's prompt files, for the `/` picker. */
  promptCandidates(items: PromptCandidate[]): void {
    this.prompts.setCandidates(items);
  }

  renderChips(chips: ContextChip[]): void {
    this.chips.replaceChildren(...chips.map((c) => {
      const label = chipLabel(c);
      const title = c.mention && c.startLine === 0 ? `${label}: read when the question is sent` : label;
      return h('li', { class: 'chip', title: c.truncated ? 'Cut to the context limit' : title },
        label, h('span', { class: 'chip-lang' }, c.language), c.truncated ? ' (cut)' : '',
        h('button', {
          type: 'button', class: 'chip-remove', 'aria-label': `Remove ${label}`,
          onclick: () => post({ type: 'removeContext', id: c.id }),
        }, icon('close')));
    }));
    this.chips.classList.toggle('hidden', chips.length === 0);
  }

  private onInput(): void {
    if (this.error.textContent) this.error.textContent = '';
    this.picker.update();
    this.prompts.update();
    // With images attached, the state is megabytes of JSON that VS Code copies on each save: saved once typing pauses.
    clearTimeout(this.draftTimer);
    if (this.images.length) this.draftTimer = setTimeout(() => this.saveDraft(), DRAFT_SAVE_DELAY_MS);
    else this.saveDraft();
  }

  private saveDraft(): void {
    clearTimeout(this.draftTimer);
    // Attached images are kept with the draft unless they are very large together (state is held in memory).
    const size = this.images.reduce((n, i) => n + i.dataUrl.length, 0);
    saveState(this.images.length && size <= DRAFT_IMAGES_CHARS ? { draft: this.input.value, images: this.images } : { draft: this.input.value });
  }

  private onKeyDown(e: KeyboardEvent): void {
    if (this.picker.onKeyDown(e) || this.prompts.onKeyDown(e)) return;
    if (e.key !== 'Enter' || e.shiftKey || e.isComposing || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    if (!this.generating) this.send();
  }

  private onSendClick(): void {
    if (this.generating) post({ type: 'stop' });
    else this.send();
    this.focus();
  }

  private send(): void {
    const text = this.input.value;
    if (!text.trim() && this.images.length === 0) {
      this.showError('Type a question first.');
      return;
    }
    if (text.length > LIMITS.promptChars) {
      this.showError(`The message is too long (${text.length.toLocaleString('en-US')} characters; the limit is ${LIMITS.promptChars.toLocaleString('en-US')}).`);
      return;
    }
    this.lastSent = { text, images: this.images };
    // `/name …` for a prompt file the host listed runs it; its images stay in the composer for the next question.
    const call = this.prompts.callIn(text);
    if (call) {
      post({ type: 'runPrompt', ...call });
      this.input.value = '';
      this.lastSent.images = [];
      this.error.textContent = '';
      this.saveDraft();
      return;
    }
    post({ type: 'send', text, images: this.images });
    this.input.value = '';
    this.images = [];
    this.error.textContent = '';
    this.imagesChanged();
  }

  private onPaste(e: ClipboardEvent): void {
    const files = [...(e.clipboardData?.files ?? [])];
    if (!files.length) return;
    e.preventDefault();
    this.addFiles(files);
  }

  /** Checks type and size in the webview so that nothing unusable is ever sent; reads the rest as data URLs. */
  addFiles(files: File[]): void {
    for (const file of files) {
      if (!(IMAGE_MIME_TYPES as readonly string[]).includes(file.type)) {
        this.showError(`${file.name || 'That file'} is not a PNG, JPEG, GIF or WebP image, so it was not attached.`);
        continue;
      }
      if (file.size > LIMITS.imageBytes) {
        this.showError(`${file.name || 'That image'} is ${(file.size / MB).toFixed(1)} MB; the limit is ${LIMITS.imageBytes / MB} MB, so it was not attached.`);
        continue;
      }
      const reader = new FileReader();
      reader.onload = () => {
        if (typeof reader.result === 'string') this.addImage({ name: file.name || 'pasted image', dataUrl: reader.result });
      };
      reader.onerror = () => this.showError(`Could not read ${file.name || 'the image'}.`);
      reader.readAsDataURL(file);
    }
  }

  private renderThumbs(): void {
    this.thumbs.replaceChildren(...this.images.map((img, i) => h('div', { class: 'thumb-wrap', role: 'listitem' },
      thumbnail(img),
      h('button', {
        type: 'button', class: 'thumb-remove', 'aria-label': `Remove image ${img.name}`,
        onclick: () => {
          this.images.splice(i, 1);
          this.imagesChanged();
          this.focus();
        },
      }, icon('close')))));
    this.thumbs.classList.toggle('hidden', this.images.length === 0);
  }

  /** The attached images changed: shown, and saved with the draft. */
  private imagesChanged(): void {
    this.renderThumbs();
    this.saveDraft();
  }
}
