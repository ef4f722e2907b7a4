// Types for pollUntil.mjs.

/** Calls `check` every `intervalMs` until it returns something truthy; fails naming `what` after `timeoutMs`. */
export function pollUntil<T>(what: string, check: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs: number, intervalMs: number): Promise<T>;
