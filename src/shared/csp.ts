// The chat webview's Content Security Policy, in one place: the host sets it and the Chromium tests render under it.

/**
 * Nothing loads but scripts with the page's nonce (the bundle, and the highlighting worker's script that the bundle
 * adds when it first highlights code), the page's own stylesheet (with the nonce), styles, fonts and images from the
 * webview's resource origin,
 * and `data:` images (pasted attachments). No remote origin anywhere, so model output cannot make the page fetch.
 * Workers only from blob: URLs, the one way a webview can start one: the bundle starts its highlighter so.
 */
export function webviewCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    'worker-src blob:',
  ].join('; ');
}
