// Types for recordings.mjs.

/** PARLEY_LLAMA_RECORD=1: write the recordings instead of comparing. */
export const RECORD: boolean;
/** The parts of a body that stay the same from one run to the next. */
export function stable(value: unknown, scrub?: (s: string) => string): unknown;
/** Compares a live body with its recording at `path` on their stable parts (PARLEY_LLAMA_RECORD=1: writes it). */
export function matchesRecording(path: string, text: string, scrub?: (s: string) => string, parse?: (text: string) => unknown): void;
