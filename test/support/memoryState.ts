// Key-value state in memory, with the shape of VS Code's Memento (global state) that Parley's stores read and write.

/** A state in memory; `data` shows what is in it. */
export function memoryState(): {
  data: Record<string, unknown>;
  keys(): readonly string[];
  get<T>(key: string, fallback?: T): T;
  update(key: string, value: unknown): Promise<void>;
} {
  const data: Record<string, unknown> = {};
  return {
    data,
    keys: () => Object.keys(data),
    get: <T>(key: string, fallback?: T) => (key in data ? (data[key] as T) : (fallback as T)),
    update(key: string, value: unknown) {
      if (value === undefined) delete data[key];
      else data[key] = value;
      return Promise.resolve();
    },
  };
}

/** Key-value state in memory with globalState's semantics: values copied in and out, update(key, undefined) removes the key. */
export class MemoryState {
  readonly values = new Map<string, unknown>();
  get<T>(key: string, defaultValue: T): T {
    return this.values.has(key) ? (structuredClone(this.values.get(key)) as T) : defaultValue;
  }
  async update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, structuredClone(value));
  }
}
