// What the chat view shows around the conversation: the header (endpoint, model, model list) and the setup card.
import { listModelInfo } from '../core/client';
import { resolveWindow, type WindowInfo } from '../core/contextWindow';
import { listedModel, type ModelInfo } from '../core/modelInfo';
import type { ServerWindow, WindowProbe } from '../core/serverWindow';
import { errorView, imagesRefusal } from '../core/errorView';
import { overrideFor } from '../core/profiles';
import { DEMO_MODEL, PRESETS } from '../core/presets';
import type { ErrorView, HeaderView, SetupView } from '../shared/protocol';
import type { Settings, SettingsSnapshot } from './config';
import type { Log } from './log';
import { profileName } from '../core/profiles';
import type { ChatRequester, ReadyTarget, Selection, Target, TargetProblem } from './requester';
import { isLoopbackOrigin } from '../core/endpoint';
import type { ViewChannel } from './viewChannel';
import { serverWindow } from './lazy/serverWindow';
import { reasoningEffort } from './lazy/reasoningEffort';

/**
 * Which list a target's models come from: its profile (headers can change what a gateway lists) and its models URL
 * (two profiles on one host may have different paths).
 */
function listKey(t: ReadyTarget): string {
  return `${profileName(t.settings)}\n${t.endpoint.modelsUrl}`;
}

/** Builds the header and setup card from a target, and keeps the model list each endpoint's GET /models gave. */
export class ChatViewModels {
  /** Each list's GET /models, asked once (again only when forced), by listKey: callers close together share it. */
  private readonly asked = new Map<string, Promise<ModelInfo[]>>();
  /** The lists that have answered (empty when the request failed): what the header shows, and context windows. */
  private readonly lists = new Map<string, ModelInfo[]>();
  /** Each list's window probe (the server's own endpoints, see serverWindow.ts), made again when forgotten. */
  private readonly probes = new Map<string, WindowProbe>();
  /** What each probe said, by list and model. */
  private readonly windows = new Map<string, Promise<ServerWindow>>();
  /** The first snapshot's target, resolving since the view was made (prefetch). */
  private early: { target: Promise<Target>; settings: Settings; selection: string; generation: number; at: number } | undefined;
  /** Counts endpoint changes (settings, keys, the header's profile and model), so a prefetched target is not stale. */
  private endpointGeneration = 0;

  constructor(
    private readonly requester: ChatRequester,
    private readonly channel: ViewChannel,
    private readonly log: Log,
    private readonly settings: Pick<SettingsSnapshot, 'current'>,
    /** The open conversation's profile and model. */
    private readonly selection: () => Selection = () => ({}),
  ) {}

  /**
   * Starts resolving the target the first snapshot needs (the key from SecretStorage: in a remote window a round trip
   * to the browser side, slow in a window just opened) while the panel's webview loads, instead of after it is ready.
   */
  prefetch(): void {
    if (this.early) return;
    const settings = this.settings.current;
    const target = this.requester.target(settings, false, this.selection());
    target.catch(() => {});
    this.early = { target, settings, selection: JSON.stringify(this.selection()), generation: this.endpointGeneration, at: Date.now() };
  }

  /** The prefetched target when nothing it depends on changed since (settings, keys, the profile or model); once. */
  snapshotTarget(): Promise<Target> {
    const e = this.early;
    this.early = undefined;
    const again = () => this.requester.target(undefined, false, this.selection());
    // Fresh only for a few seconds (a key changed in another window is not announced here), and asked again if it failed.
    const fresh = e && Date.now() - e.at < 5_000 && e.settings === this.settings.current && e.generation === this.endpointGeneration && e.selection === JSON.stringify(this.selection());
    return fresh ? e.target.catch(again) : again();
  }

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
    const ready = target.kind === 'ready';
    const list = ready ? this.lists.get(listKey(target)) : undefined;
    // The reasoning effort it offers (dist/reasoningEffort.js), for a panel target.
    return { model, endpoint, demo, models: (list ?? []).map((m) => m.id), profile: profileName(target.settings), profiles, ...(ready && reasoningEffort().headerEffort(this.requester, target, list)) };
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
   * Asks GET /models once per list (`force`: again); the header then offers a picker. Failure means "type the name".
   * `target` saves resolving it again when the caller just did.
   */
  async refreshModels(force = false, target?: Target): Promise<string[]> {
    const t = target ?? (await this.requester.target(undefined, false, this.selection()));
    if (t.kind !== 'ready') return [];
    const key = listKey(t);
    let asking = force ? undefined : this.asked.get(key);
    if (!asking) this.asked.set(key, (asking = this.fetchModels(t, key)));
    return (await asking).map((m) => m.id);
  }

  private async fetchModels(t: ReadyTarget, key: string): Promise<ModelInfo[]> {
    let list: ModelInfo[] = [];
    try {
      list = await listModelInfo(this.requester.clientOptions(t, AbortSignal.timeout(10_000)));
    } catch (e) {
      this.log.debug(`GET models failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.lists.set(key, list);
    this.forgetWindows(key);
    this.channel.post({ type: 'header', header: this.header(t) });
    return list;
  }

  /**
   * The model's window: what the server runs it at (its model list, else its own endpoints: llama.cpp's /props,
   * Ollama's /api/ps, LM Studio's model table), lowered by a smaller contextWindow setting (the profile's for the model
   * or parley.contextWindow, already in the target's settings), else the setting, else unknown; with its words for the
   * meter. The reply's room from the same sources. `serverWindow` only for a local server (llama.cpp, Ollama, LM
   * Studio, vLLM).
   */
  async windowFor(t: ReadyTarget): Promise<WindowInfo & { notes: string[]; server: ServerWindow }> {
    const s = t.settings;
    const key = listKey(t);
    const mk = `${key}\n${s.model}`;
    let asked = this.windows.get(mk);
    if (!asked && this.lists.has(key)) {
      let probe = this.probes.get(key);
      if (!probe) this.probes.set(key, (probe = new (serverWindow().WindowProbe)(this.requester.clientOptions(t), this.lists.get(key) ?? [])));
      this.windows.set(mk, (asked = probe.windowOf(s.model)));
    }
    const server = (await asked) ?? {};
    const info = this.lists.get(key)?.find((m) => m.id === s.model);
    const w = resolveWindow({ contextLength: server.window, maxOutputTokens: info?.maxOutputTokens }, { contextWindow: s.contextWindow }, s.maxTokens);
    const notes = serverWindow().windowNotes(server, w, s.model);
    // A prompt past serverWindow is not sent: only to a local server, which may cut it silently. A cloud API's error
    // says so itself, and Parley's estimate is not close enough to refuse a prompt near a 128k window.
    if (!server.kind) delete w.serverWindow;
    return { ...w, notes, server };
  }

  /**
   * After a reply: a window read while the model was not loaded (or not read at all from a local server) is asked
   * again, since loading it settled the window; `always` (a context error, a dropped prompt): asked again anyway.
   */
  async afterReply(t: ReadyTarget, always = false): Promise<void> {
    const key = listKey(t);
    const mk = `${key}\n${t.settings.model}`;
    const known = await this.windows.get(mk);
    if (always || (known?.kind !== undefined && known.loaded !== true)) this.forgetWindows(key);
  }

  private forgetWindows(key: string): void {
    this.probes.delete(key);
    for (const k of this.windows.keys()) if (k.startsWith(`${key}\n`)) this.windows.delete(k);
  }

  /**
   * Whether the server's model list says the open conversation's model takes images (asking GET /models once, if no
   * answer is kept yet); undefined when there is no list or it does not say. "llama3.2" counts as "llama3.2:latest".
   */
  async takesImages(): Promise<boolean | undefined> {
    const t = await this.requester.target(undefined, false, this.selection());
    if (t.kind !== 'ready') return undefined;
    await this.refreshModels(false, t);
    return listedModel(this.lists.get(listKey(t)), t.settings.model)?.imageInput;
  }

  /**
   * Why the open conversation's model takes no images, in words, or undefined: its profile says so (`vision: false`),
   * or else the server's model list does (`vision: true` in the profile wins over the list). Checked before an image
   * is sent or attached, so that a text-only model is not sent one (llama.cpp answers it with a 500).
   */
  async imagesRefused(): Promise<string | undefined> {
    const s = this.requester.selected(this.selection());
    const p = s.profile;
    const vision = p ? overrideFor(p, s.model).vision : undefined;
    // The model list is asked only when the profile does not say.
    return imagesRefusal(s.model, p ? { name: p.name, vision } : undefined, vision === undefined ? await this.takesImages() : undefined);
  }

  /** Endpoint or key changed: redraw header and setup card. */
  async endpointChanged(): Promise<Target> {
    this.endpointGeneration++;
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
