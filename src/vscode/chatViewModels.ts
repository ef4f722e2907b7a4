// What the chat view shows around the conversation: the header (endpoint, model, model list) and the setup card.
import { listModels } from '../core/client';
import { errorView } from '../core/errorView';
import { DEMO_MODEL, PRESETS } from '../core/presets';
import type { ErrorView, HeaderView, SetupView } from '../shared/protocol';
import type { Log } from './log';
import type { Requester, Target, TargetProblem } from './requester';
import { isLoopbackOrigin } from './secrets';
import type { ViewChannel } from './viewChannel';

/** Builds the header and setup card from a target, and keeps the model list each endpoint's GET /models gave. */
export class ChatViewModels {
  private readonly models = new Map<string, string[]>();

  constructor(
    private readonly requester: Requester,
    private readonly channel: ViewChannel,
    private readonly log: Log,
  ) {}

  /**
   * The header names the endpoint requests actually go to: the user's own until a workspace-set origin is allowed.
   * The demo endpoint is `npm start`'s, on loopback with its own model name.
   */
  header(target: Target): HeaderView {
    const model = target.settings.model;
    let endpoint: string;
    if (target.kind === 'ready') endpoint = target.host;
    else if (target.kind === 'no-key') endpoint = new URL(target.origin).host;
    else endpoint = String(target.settings.baseUrl); // shown as typed; the setup card says what is wrong with it
    const demo = model === DEMO_MODEL && target.kind === 'ready' && isLoopbackOrigin(target.endpoint.origin);
    return { model, endpoint, demo, models: this.models.get(endpoint) ?? [], profile: '', profiles: [] };
  }

  /** The first-run card, while the target is not ready. */
  setup(target: Target): SetupView | undefined {
    if (target.kind === 'ready') return undefined;
    if (target.kind === 'no-key') {
      return {
        reason: `No API key is set for ${target.origin}. Set one, mark this endpoint as needing none, or pick a preset.`,
        presets: [...PRESETS],
        origin: target.origin,
        actions: ['setApiKey', 'markNoKey', 'testConnection'],
      };
    }
    return {
      reason: `The endpoint is not set up: ${target.error.message}`,
      presets: [...PRESETS],
      origin: '',
      actions: ['openSettings', 'testConnection'],
    };
  }

  /** The error card of a turn asked while the target is not ready. */
  problemError(p: TargetProblem): ErrorView {
    if (p.kind === 'no-key') {
      return {
        kind: 'auth',
        title: `No API key is set for ${p.origin}.`,
        hint: 'Set the key for this endpoint, or mark it as needing none (local servers usually need none).',
        actions: ['setApiKey', 'markNoKey', 'testConnection'],
      };
    }
    return errorView(p.error, { model: p.settings.model, url: '' });
  }

  /**
   * Asks GET /models once per endpoint; the header then offers a picker. Failure means "type the name".
   * `target` saves resolving it again when the caller just did.
   */
  async refreshModels(force = false, target?: Target): Promise<string[]> {
    const t = target ?? (await this.requester.target());
    if (t.kind !== 'ready') return [];
    if (!force && this.models.has(t.host)) return this.models.get(t.host) ?? [];
    try {
      const list = await listModels(this.requester.clientOptions(t, AbortSignal.timeout(10_000)));
      this.models.set(t.host, list);
    } catch (e) {
      this.models.set(t.host, []);
      this.log.debug(`GET models failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.channel.post({ type: 'header', header: this.header(t) });
    return this.models.get(t.host) ?? [];
  }

  /** Endpoint or key changed: redraw header and setup card. */
  async endpointChanged(): Promise<void> {
    const t = await this.requester.target();
    this.channel.post({ type: 'header', header: this.header(t) });
    this.channel.post({ type: 'setup', setup: this.setup(t) });
    void this.refreshModels(false, t);
  }
}
