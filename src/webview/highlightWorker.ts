// The webview's highlighting worker: highlight.js runs here, off the page's main thread, and each code block comes
// back as a tree of class names and text (src/webview/highlight.ts builds it into nodes; nothing is parsed as HTML).
import hljs from 'highlight.js/lib/core';
import type { Emitter } from 'highlight.js';
import { languages } from './languages';

/** Highlighted code: pieces of text, and spans with a class and their own pieces. */
export type CodeTree = (string | CodeSpan)[];
export type CodeSpan = [className: string, children: CodeTree];

/** What the page asks for: one code block in one language. */
export interface HighlightRequest {
  id: number;
  lang: string;
  code: string;
}

/**
 * The answer, by the request's id: the tree, or none when the code is to stay plain text (highlight.js gave up on
 * it, or `unknownLanguage`: the language is not one of ours, and never will be in this page).
 */
export interface HighlightReply {
  id: number;
  tree?: CodeTree;
  unknownLanguage?: boolean;
}

for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);

/**
 * highlight.js calls these methods as it tokenises (its TokenTreeEmitter does the same into its own tree, then into
 * HTML). The tree built here has the same nodes as parsing that HTML would give.
 */
class TreeEmitter implements Emitter {
  readonly root: CodeTree = [];
  private readonly stack: CodeTree[] = [this.root];
  /** Text not yet added: adjacent pieces become one, as they would in parsed HTML. */
  private text = '';

  addText(text: string): void {
    this.text += text;
  }

  startScope(scope: string): void {
    this.flush();
    const children: CodeTree = [];
    this.top().push([scopeClass(scope), children]);
    this.stack.push(children);
  }

  endScope(): void {
    this.flush();
    if (this.stack.length > 1) this.stack.pop();
  }

  // The older names highlight.js still calls for a mode's scope.
  openNode(scope: string): void {
    this.startScope(scope);
  }

  closeNode(): void {
    this.endScope();
  }

  /** Code in an embedded language, highlighted by another emitter: in a span named after the language, if known. */
  __addSublanguage(emitter: Emitter, name: string): void {
    this.flush();
    const sub = emitter as TreeEmitter;
    sub.finalize();
    if (name) this.top().push([`language-${name}`, sub.root]);
    else for (const piece of sub.root) this.top().push(piece);
  }

  finalize(): boolean {
    this.flush();
    this.stack.length = 1;
    return true;
  }

  /** The HTML is never used: the page gets `root`. */
  toHTML(): string {
    return '';
  }

  private top(): CodeTree {
    return this.stack[this.stack.length - 1];
  }

  private flush(): void {
    if (!this.text) return;
    this.top().push(this.text);
    this.text = '';
  }
}

/** highlight.js's CSS class for a scope: "title.function" is "hljs-title function_" (as its HTML renderer has it). */
function scopeClass(scope: string): string {
  if (scope.startsWith('language:')) return `language-${scope.slice(9)}`;
  const [first, ...rest] = scope.split('.');
  return [`hljs-${first}`, ...rest.map((piece, i) => `${piece}${'_'.repeat(i + 1)}`)].join(' ');
}

hljs.configure({ __emitter: TreeEmitter });

function highlight({ id, lang, code }: HighlightRequest): HighlightReply {
  if (!hljs.getLanguage(lang)) return { id, unknownLanguage: true };
  try {
    // Empty code (a fence that just opened) compiles the grammar, ready for the code that follows.
    const result = hljs.highlight(code, { language: lang, ignoreIllegals: true });
    if (!result.errorRaised && !result.illegal) return { id, tree: (result._emitter as TreeEmitter).root };
  } catch {
    // plain text, then
  }
  return { id };
}

// A worker's global scope: typed here through the DOM lib's names, which is what the webview's tsconfig has.
const scope = self as unknown as { onmessage: ((e: MessageEvent<HighlightRequest>) => void) | null; postMessage(reply: HighlightReply): void };
scope.onmessage = (e) => scope.postMessage(highlight(e.data));
