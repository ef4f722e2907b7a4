// The one way from the host's chat objects to the webview: a poster the view attaches while it exists.
import type { HostMessage } from '../shared/protocol';

/** Posts host messages to the chat view; messages are dropped while no view is attached (a snapshot follows `ready`). */
export class ViewChannel {
  private poster: ((m: HostMessage) => void) | undefined;

  /** The view attaches a poster when its webview says `ready`, and detaches it when the webview goes. */
  attach(poster: ((m: HostMessage) => void) | undefined): void {
    this.poster = poster;
  }

  /** Whether a view is there to receive messages. */
  get attached(): boolean {
    return this.poster !== undefined;
  }

  post(m: HostMessage): void {
    this.poster?.(m);
  }
}
