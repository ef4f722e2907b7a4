// What the chat view shows around the conversation: the header (endpoint, model, model list) and the setup card.
import { listModelInfo, llamaCppContext } from '../core/client';
import { resolveWindow, type WindowInfo } from '../core/contextWindow';
import type { ModelInfo } from '../core/modelInfo';
import { overrideFor } from '../core/profiles';
import { errorView } from '../core/errorView';
import { DEMO_MODEL, PRESETS } from '../core/presets';
import type { ErrorView, HeaderView, SetupView } from '../shared/protocol';
import type { Log } from './log';
import { profileName, type ReadyTarget, type Requester, type Selection, type Target, type TargetProblem } from './requester';
import { isLoopbackOrigin } from './secrets';
import type { ViewChannel } from './viewChannel';

/** Builds the header and setup card from a target, and keeps the model list each endpoint's GET /models gave. */
export class ChatViewModels {
  private readonly models = new Map<string, string[]>();
  /** What each endpoint's GET /models said of its models (context windows among it). */
  private readonly infos = new Map<string, ModelInfo[]>();
  /** llama.cpp's loaded context (GET /props), per host, asked once; undefined when the server is not llama.cpp. */
  private readonly props = new Map<string, Promise<number | undefined>>();

  constructor(
    private readonly requester: Requester,
    private readonly channel: ViewChannel,
    private readonly log: Log,
    /** The open conversation's profile and model. */
    private readonly selection: () => Selection = () => ({}),
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
    const profiles = target.settings.profiles.map((p) => ({ name: p.name, endpoint: hostOf(p.baseUrl) }));
    return { model, endpoint, demo, models: this.models.get(endpoint) ?? [], profile: profileName(target.settings), profiles };
  }

  /** The first-run card, while the target is not ready. */
  setup(target: Target): SetupView | undefined {
    if (target.kind === 'ready') return undefined;
    // A value set where this window ignores it explains a setup that looks wrong: say where to set it.
    const unapplied = target.settings.unapplied.length ? ` ${target.settings.unapplied.join(' ')}` : '';
    if (target.kind === 'no-key') {
      return {
        reason: `No API key is set for ${target.origin}. Set one, mark this endpoint as needing none, or pick a preset.${unapplied}`,
        presets: [...PRESETS],
        origin: target.origin,
        actions: ['setApiKey', 'markNoKey', 'testConnection'],
      };
    }
    return {
      reason: `The endpoint is not set up: ${target.error.message}${unapplied}`,
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
    const t = target ?? (await this.requester.target(undefined, false, this.selection()));
    if (t.kind !== 'ready') return [];
    if (!force && this.models.has(t.host)) return this.models.get(t.host) ?? [];
    if (force) this.props.delete(t.host);
    try {
      const list = await listModelInfo(this.requester.clientOptions(t, AbortSignal.timeout(10_000)));
      this.infos.set(t.host, list);
      this.models.set(t.host, list.map((m) => m.id));
    } catch (e) {
      this.models.set(t.host, []);
      this.infos.set(t.host, []);
      this.log.debug(`GET models failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.channel.post({ type: 'header', header: this.header(t) });
    return this.models.get(t.host) ?? [];
  }

  /**
   * The model's window: what the server's model list says, else llama.cpp's /props, else the profile's setting for the
   * model, else unknown. The reply's room from the same sources and parley.maxTokens.
   */
  async windowFor(t: ReadyTarget): Promise<WindowInfo> {
    const s = t.settings;
    const override = s.profile ? overrideFor(s.profile, s.model) : {};
    let info = this.infos.get(t.host)?.find((m) => m.id === s.model);
    if (info?.contextLength === undefined && this.infos.has(t.host)) {
      let asked = this.props.get(t.host);
      if (!asked) this.props.set(t.host, (asked = llamaCppContext(this.requester.clientOptions(t, AbortSignal.timeout(5_000)))));
      const n = await asked;
      if (n !== undefined) info = { ...(info ?? { id: s.model }), contextLength: n };
    }
    return resolveWindow(info, { contextWindow: override.contextWindow ?? s.contextWindow, maxOutputTokens: override.maxOutputTokens }, s.maxTokens);
  }

  /** Endpoint or key changed: redraw header and setup card. */
  async endpointChanged(): Promise<Target> {
    const t = await this.requester.target(undefined, false, this.selection());
    this.channel.post({ type: 'header', header: this.header(t) });
    this.channel.post({ type: 'setup', setup: this.setup(t) });
    void this.refreshModels(false, t);
    return t;
  }
}

/** host[:port] of a base URL, or the value as written when it is not one. */
function hostOf(url: unknown): string {
  try {
    return new URL(String(url)).host;
  } catch {
    return String(url);
  }
}
