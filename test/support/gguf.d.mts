// Types for gguf.mjs.

export const GGUF_TYPE: Readonly<{ UINT32: 4; INT32: 5; FLOAT32: 6; BOOL: 7; STRING: 8; ARRAY: 9; UINT64: 10 }>;
/** The bytes of a GGUF v3 file with f32 tensors (dims innermost first). */
export function encodeGguf(model: {
  metadata: Array<[string, number, unknown]>;
  tensors: Array<{ name: string; dims: number[]; data: Float32Array }>;
}): Buffer;
