// What each message from the host does to the panel: one route per HostMessage type (a type without its route does not
// compile). main.ts builds the panel and hands it in; the routes only call it, so they run in a test without a page.
import type { Routes } from '../shared/messageTable';
import type { ActionId, HistoryItem, HostMessage, SetupView } from '../shared/protocol';
import type { Composer } from './composer';
import type { Header } from './panels';
import type { Transcript } from './transcript';

/** The panel as the host's messages reach it: its parts, and main.ts's steps that change several of them at once. */
export interface Panel {
  transcript: Pick<Transcript, 'setTurns' | 'turnStart' | 'delta' | 'turnEnd' | 'turnSteps'>;
  composer: Pick<Composer, 'renderChips' | 'accepted' | 'setTools' | 'showError' | 'setText' | 'addImage' | 'mentionCandidates' | 'promptCandidates'>;
  header: Pick<Header, 'render' | 'setMeter'>;
  /** Draws a snapshot with `draw`; around the first one, the stages of bench/latency.mjs and the renderer's warm-up. */
  drawSnapshot(draw: () => void): void;
  setGenerating(value: boolean): void;
  renderSetup(setup: SetupView | undefined): void;
  showNotice(text: string, actions: ActionId[] | undefined): void;
  /** The conversation in view (the history list hidden), and the composer focused. */
  showChat(): void;
  /** The history list in place of the conversation. */
  showHistory(items: HistoryItem[]): void;
}

/** The routes of the host's messages into `panel`. */
export function hostRoutes(panel: Panel): Routes<HostMessage> {
  const { transcript, composer, header } = panel;
  return {
    snapshot: (msg) => panel.drawSnapshot(() => {
      header.render(msg.header);
      panel.renderSetup(msg.setup);
      composer.renderChips(msg.pendingContext);
      panel.setGenerating(msg.generating);
      transcript.setTurns(msg.conversation.turns);
    }),
    turnStart: (msg) => {
      if (msg.turn.role === 'user') composer.accepted();
      transcript.turnStart(msg.turn);
    },
    delta: (msg) => transcript.delta(msg.turnId, msg.text, msg.reasoning),
    turnEnd: (msg) => transcript.turnEnd(msg.turn),
    turnSteps: (msg) => transcript.turnSteps(msg.turnId, msg.steps),
    tools: (msg) => composer.setTools(msg.enabled, msg.available),
    generating: (msg) => panel.setGenerating(msg.value),
    header: (msg) => header.render(msg.header),
    meter: (msg) => header.setMeter(msg.meter),
    setup: (msg) => panel.renderSetup(msg.setup),
    history: (msg) => panel.showHistory(msg.items),
    pendingContext: (msg) => composer.renderChips(msg.chips),
    notice: (msg) => panel.showNotice(msg.text, msg.actions),
    composerError: (msg) => composer.showError(msg.text, true),
    composerText: (msg) => {
      panel.showChat();
      composer.setText(msg.text, msg.images);
    },
    imageAttached: (msg) => composer.addImage(msg.image),
    mentionCandidates: (msg) => composer.mentionCandidates(msg.query, msg.items),
    promptCandidates: (msg) => composer.promptCandidates(msg.items),
    focusComposer: () => panel.showChat(),
  };
}
