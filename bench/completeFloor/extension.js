// The floor of bench/complete.mjs: the least an inline completion provider can do with the same server. On each call
// it posts the text around the cursor to completeFloor.url and returns the answer's `content`; the call's token
// aborts the fetch. No debounce, no cache, no shaping: what is left of keystroke -> ghost text is VS Code's own.
const vscode = require('vscode');

exports.activate = (context) => {
  context.subscriptions.push(vscode.languages.registerInlineCompletionItemProvider({ pattern: '**' }, {
    async provideInlineCompletionItems(doc, pos, _ctx, token) {
      const url = vscode.workspace.getConfiguration('completeFloor').get('url');
      if (!url) return undefined;
      const controller = new AbortController();
      const sub = token.onCancellationRequested(() => controller.abort());
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ input_prefix: doc.getText(new vscode.Range(new vscode.Position(0, 0), pos)), input_suffix: '', n_predict: 16 }),
          signal: controller.signal,
        });
        const json = await res.json();
        return [new vscode.InlineCompletionItem(json.content, new vscode.Range(pos, pos))];
      } catch {
        return undefined;
      } finally {
        sub.dispose();
      }
    },
  }));
};

exports.deactivate = () => {};
