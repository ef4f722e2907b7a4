// Integration suite entry: run() is called by the extension host.
export async function run(): Promise<void> {}
