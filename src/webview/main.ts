// Webview entry point (placeholder until the chat panel lands).
export {};
