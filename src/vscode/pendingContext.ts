// Code attached to the next question (Add Selection to Chat, `@` mentions, Edit last question), shown as chips above the composer.
import { contextBlock, type ContextItem } from '../core/conversation';
import type { ContextChip } from '../shared/protocol';
import type { ViewChannel } from './viewChannel';

/** The chips waiting for the next question. Every change is posted, so the composer always shows what will be sent. */
export class PendingContext {
  private items: ContextItem[] = [];

  constructor(private readonly channel: ViewChannel, private readonly onChange: () => void = () => undefined) {}

  /** The code the chips would send, as it would be sent (for the context meter). */
  pendingText(): string {
    return this.items.map(contextBlock).join('\n\n');
  }

  /** What the webview may see: the chips, without the code. */
  chips(): ContextChip[] {
    return this.items.map(({ code: _c, ...chip }) => chip);
  }

  add(item: ContextItem): void {
    this.items.push(item);
    this.changed();
  }

  remove(id: string): void {
    this.items = this.items.filter((c) => c.id !== id);
    this.changed();
  }

  /** Puts chips back without posting them: the snapshot that follows shows them (Edit last question). */
  putBack(items: readonly ContextItem[]): void {
    this.items.push(...items);
  }

  /** Puts taken chips back in front, and shows them: a question that could not be sent keeps its context. */
  restore(items: readonly ContextItem[]): void {
    this.items.unshift(...items);
    this.changed();
  }

  /** Takes every chip for a question being sent; the composer shows none afterwards. */
  take(): ContextItem[] {
    const taken = this.items;
    this.items = [];
    // The chips go with the question: the meter posted when its turn ends counts them there.
    this.postChips();
    return taken;
  }

  private changed(): void {
    this.postChips();
    this.onChange();
  }

  private postChips(): void {
    this.channel.post({ type: 'pendingContext', chips: this.chips() });
  }
}
