// A tool as another extension would register it (vscode.lm.registerTool), for Parley's integration runs only.
const vscode = require('vscode');

/** Counts invocations, so a test can tell whether the tool ran. */
let invocations = 0;

exports.activate = (context) => {
  context.subscriptions.push(
    vscode.lm.registerTool('parley_test_echo', {
      invoke(options) {
        invocations++;
        const text = String(options.input?.text ?? '');
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`echo #${invocations}: ${[...text].reverse().join('')}`)]);
      },
    }),
  );
  return { invocations: () => invocations };
};
