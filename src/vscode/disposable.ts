// A base for objects that own disposables, as in vscode-pull-request-github: register once, all disposed with the owner.
import type * as vscode from 'vscode';

/** Owns what it `_register`s and disposes it, newest first, when it is disposed itself. */
export abstract class Disposable implements vscode.Disposable {
  private readonly owned: vscode.Disposable[] = [];
  private disposed = false;

  /** Takes ownership of `d`; registered after dispose, it is disposed at once so nothing leaks. */
  protected _register<T extends vscode.Disposable>(d: T): T {
    if (this.disposed) d.dispose();
    else this.owned.push(d);
    return d;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.owned.splice(0).reverse()) d.dispose();
  }
}
