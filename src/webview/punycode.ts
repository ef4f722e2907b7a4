// markdown-it's host names in links, in place of the `punycode.js` package (scripts/webview-build.mjs aliases it here
// for the webview bundle only): the browser's own URL parser turns a host into its ASCII (IDNA) form; a host is shown
// as written (an `xn--` host stays in ASCII, which also keeps look-alike letters from hiding in a link's text).

/** A host name's ASCII form, as the browser's URL parser makes it; the host as given when it is no valid host. */
function toASCII(host: string): string {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return host;
  }
}

/** A host name as shown: as written. */
function toUnicode(host: string): string {
  return host;
}

export default { toASCII, toUnicode };
