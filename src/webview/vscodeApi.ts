// The typed channel to the extension host: the webview's only way out.
import type { ImageView, WebviewMessage } from '../shared/protocol';

/** What the webview keeps in vscode.setState: only the composer's draft; the host owns everything else. */
export interface WebviewState {
  draft?: string;
  /** Images attached to the draft, so hiding the view does not lose them. */
  images?: ImageView[];
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();

/** Posts one protocol message to the host. */
export function post(message: WebviewMessage): void {
  api.postMessage(message);
}

export function loadState(): WebviewState {
  const s = api.getState();
  return s && typeof s === 'object' ? (s as WebviewState) : {};
}

export function saveState(state: WebviewState): void {
  api.setState(state);
}
