// Polling with a bound that names what it waited for: shared by the integration tests (inside VS Code, bundled) and
// the UI tests (Playwright, run by Node as they are), hence plain JavaScript.

/**
 * Calls `check` every `intervalMs` until it returns something truthy, and returns that. After `timeoutMs` it fails
 * naming `what` and the first line of the last error `check` threw (an error only means "not yet").
 */
export async function pollUntil(what, check, timeoutMs, intervalMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last.message ?? last).split('\n')[0]})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
