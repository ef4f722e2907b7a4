// A GGUF v3 file writer (the container llama.cpp loads models from): typed metadata, then f32 tensors, aligned.
// Written by hand because no library in the project does it; the layout is ggml/src/gguf.cpp's (llama.cpp).

/** GGUF metadata value types (gguf.h's `enum gguf_type`). */
export const GGUF_TYPE = Object.freeze({ UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9, UINT64: 10 });

const GGML_TYPE_F32 = 0;
const ALIGNMENT = 32;

/** A growing byte buffer with little-endian writers. */
class Writer {
  constructor() {
    this.chunks = [];
    this.length = 0;
  }
  bytes(b) {
    this.chunks.push(b);
    this.length += b.length;
  }
  u32(n) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.bytes(b);
  }
  i32(n) {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    this.bytes(b);
  }
  u64(n) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.bytes(b);
  }
  f32(n) {
    const b = Buffer.alloc(4);
    b.writeFloatLE(n);
    this.bytes(b);
  }
  string(s) {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.bytes(b);
  }
  pad() {
    const n = (ALIGNMENT - (this.length % ALIGNMENT)) % ALIGNMENT;
    if (n) this.bytes(Buffer.alloc(n));
  }
  value(type, v) {
    switch (type) {
      case GGUF_TYPE.UINT32: return this.u32(v);
      case GGUF_TYPE.INT32: return this.i32(v);
      case GGUF_TYPE.FLOAT32: return this.f32(v);
      case GGUF_TYPE.BOOL: return this.bytes(Buffer.from([v ? 1 : 0]));
      case GGUF_TYPE.STRING: return this.string(v);
      case GGUF_TYPE.UINT64: return this.u64(v);
      default: throw new Error(`gguf: unsupported value type ${type}`);
    }
  }
}

/**
 * The bytes of a GGUF v3 file. `metadata`: [key, type, value] triples, an array value written as
 * [key, GGUF_TYPE.ARRAY, { type, values }]. `tensors`: f32 tensors, `dims` innermost first (ggml's ne[0], ne[1]),
 * `data` a Float32Array of their product's length.
 * @param {{ metadata: Array<[string, number, unknown]>, tensors: Array<{ name: string, dims: number[], data: Float32Array }> }} model
 * @returns {Buffer}
 */
export function encodeGguf({ metadata, tensors }) {
  const w = new Writer();
  w.bytes(Buffer.from('GGUF', 'latin1'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, type, value] of metadata) {
    w.string(key);
    w.u32(type);
    if (type === GGUF_TYPE.ARRAY) {
      w.u32(value.type);
      w.u64(value.values.length);
      for (const v of value.values) w.value(value.type, v);
    } else {
      w.value(type, value);
    }
  }
  let offset = 0;
  const placed = tensors.map((t) => {
    const count = t.dims.reduce((a, b) => a * b, 1);
    if (t.data.length !== count) throw new Error(`gguf: tensor ${t.name} has ${t.data.length} values for dims ${t.dims.join('x')}`);
    const at = offset;
    offset += Math.ceil((count * 4) / ALIGNMENT) * ALIGNMENT;
    return { ...t, at };
  });
  for (const t of placed) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_TYPE_F32);
    w.u64(t.at);
  }
  w.pad();
  for (const t of placed) {
    w.bytes(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad();
  }
  return Buffer.concat(w.chunks, w.length);
}
