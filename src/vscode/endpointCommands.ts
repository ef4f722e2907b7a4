// The endpoint commands: settings, model, presets, and forgetting what Parley learnt about endpoints (with the key commands, in one lazy bundle).
import * as vscode from 'vscode';
import { PRESETS } from '../core/presets';
import type { ChatController } from './chatController';
import type { Completions } from './completions';
import { addProfile, type SettingsSnapshot } from './config';
import { setApiKey, type KeyCommandDeps } from './keyCommands';
import { askText, pickOne, showError, showInfo } from './notices';

// The key commands travel in this lazy bundle too: they are used as rarely, and the extension's own bundle is full.
export { clearApiKey, markNoKey, setApiKey } from './keyCommands';

/** What the endpoint commands use: the chat (its profile and model), the settings, and a preset's key. */
export interface EndpointCommandDeps extends KeyCommandDeps {
  chat: ChatController;
  settings: SettingsSnapshot;
  /** Told to forget its routes with the chat's adaptations. */
  completions: Completions;
}

/** Parley: Select Model: a pick of what GET /models listed, or a name typed in. */
export async function selectModel(s: EndpointCommandDeps, title = 'Parley: Select Model', askAgain = true): Promise<void> {
  const models = await s.chat.views.refreshModels(askAgain);
  const current = s.requester.selected(s.chat.selection()).model;
  let model: string | undefined;
  if (models.length > 0) {
    const other = 'Type a model name…';
    const pick = await pickOne([...models.map((m) => ({ label: m, description: m === current ? 'current' : undefined })), { label: other }], {
      title,
    });
    if (!pick) return;
    model = pick.label === other ? undefined : pick.label;
  }
  model ??= await askText({ title: 'Parley: Model', value: current, prompt: 'The model name sent as "model".' });
  if (model === undefined) return;
  await setModel(s, model);
}

/** The open conversation's model (and its profile's in user settings), if it is a plausible name. */
export async function setModel(s: EndpointCommandDeps, model: string): Promise<void> {
  const m = model.trim();
  if (!m || /[\s]/.test(m)) {
    void showError('Parley: a model name cannot be empty or contain spaces or line breaks.');
    return;
  }
  await s.chat.setModel(m);
}

/** Parley: Switch Endpoint: a profile, then one of its models; for the open conversation and new ones. */
export async function switchEndpoint(s: EndpointCommandDeps): Promise<void> {
  const settings = s.settings.current;
  const current = s.requester.selected(s.chat.selection()).profile?.name;
  const pick = await pickOne(settings.profiles.map((p) => ({
    label: p.name,
    description: `${String(p.baseUrl)}${p.model ? ` · ${p.model}` : ''}`,
    detail: p.name === current ? 'current' : undefined,
  })), { title: 'Parley: Switch Endpoint (1/2): profile', placeHolder: 'The endpoint profile for this conversation and new ones' });
  if (!pick) return;
  await s.chat.setProfile(pick.label);
  // The switch just asked the profile's server for its models: no need to ask again.
  await selectModel(s, 'Parley: Switch Endpoint (2/2): model', false);
}

/** A preset from the setup card: its base URL and model go to user settings; then the key, if it needs one. */
export async function applyPreset(s: EndpointCommandDeps, id: string): Promise<void> {
  const p = PRESETS.find((x) => x.id === id);
  if (!p) return;
  if (p.id === 'custom') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'parley.baseUrl');
    return;
  }
  await addProfile(p.label, p.baseUrl, p.model);
  await s.chat.setProfile(p.label);
  const t = await s.requester.target(undefined, false, s.chat.selection());
  if (t.kind === 'no-key' && p.needsKey) await setApiKey(s);
}

/** Parley: Reset Endpoint Adaptations. */
export async function resetAdaptations(s: EndpointCommandDeps): Promise<void> {
  await s.requester.resetAdaptations();
  if (s.completions.loaded) s.completions.engine.forgetRoutes();
  s.log.info('Endpoint adaptations forgotten.');
  void showInfo('Parley: forgot what it learnt about endpoints; the next request sends every parameter again.');
}

/** Parley: Forget Workspace Endpoint Answers. */
export async function resetWorkspaceOrigins(s: EndpointCommandDeps): Promise<void> {
  const n = await s.requester.resetWorkspaceOrigins();
  s.log.info(`Forgot ${n} answer(s) about workspace-set endpoints, headers and system prompts.`);
  void showInfo(n
    ? `Parley: forgot ${n} answer${n === 1 ? '' : 's'} about workspace endpoints, headers and system prompts; Parley asks again before using one.`
    : 'Parley: there were no answers about workspace endpoints, headers or system prompts to forget.');
  await s.chat.endpointChanged();
}
