// The "Parley" output channel. Every line passes through redaction, so no key reaches a log file.
import type * as vscode from 'vscode';
import { redact } from '../core/redact';

type Level = 'off' | 'info' | 'debug' | 'trace';
const ORDER: Record<Level, number> = { off: 0, info: 1, debug: 2, trace: 3 };

/** Where the lines go: VS Code's log output channel in the extension, a recorder in the unit tests. */
export type LogSink = Pick<vscode.LogOutputChannel, 'info' | 'warn' | 'error' | 'show' | 'dispose'>;

export class Log {
  /** Keys seen this session, so a provider that echoes one cannot get it into the log. */
  private readonly secrets = new Set<string>();

  constructor(
    private level: () => Level,
    private readonly channel: LogSink,
  ) {}

  /** Registers a secret that must never be written. */
  addSecret(secret: string): void {
    if (secret) this.secrets.add(secret);
  }

  /** The secrets registered this session. */
  knownSecrets(): string[] {
    return [...this.secrets];
  }

  /** Removes registered secrets and masked key echoes from text meant for people or logs. */
  clean(text: string): string {
    return redact(text, [...this.secrets]);
  }

  info(line: string): void {
    if (ORDER[this.level()] >= ORDER.info) this.channel.info(this.clean(line));
  }

  warn(line: string): void {
    if (ORDER[this.level()] >= ORDER.info) this.channel.warn(this.clean(line));
  }

  error(line: string): void {
    if (ORDER[this.level()] >= ORDER.info) this.channel.error(this.clean(line));
  }

  debug(line: string): void {
    if (ORDER[this.level()] >= ORDER.debug) this.channel.info(this.clean(line));
  }

  /** Message content: only at `trace`. */
  trace(line: string): void {
    if (ORDER[this.level()] >= ORDER.trace) this.channel.info(this.clean(line));
  }

  get traceEnabled(): boolean {
    return ORDER[this.level()] >= ORDER.trace;
  }

  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
