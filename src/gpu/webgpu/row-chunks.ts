/**
 * Frozen vocabulary tables (the embedding, an untied LM head) cut into row chunks, each within one
 * storage binding and one buffer: Qwen2.5-0.5B's 151,936 × 896 embedding is 519 MiB in f32, past
 * WebGPU's default 128 MiB maxStorageBufferBindingSize, so it is stored as five tensors of at most
 * 128 MiB whose rows the gather and the LM head visit in turn. Pure: names and shapes only; the
 * ParamStore allocates, the step-memory accounting counts the same chunks.
 */

/** One chunk of a table: the stored tensor's name and the table rows [firstRow, firstRow + rows) it holds. */
export interface RowChunk {
  name: string;
  firstRow: number;
  rows: number;
}

/** The tables that may be stored in row chunks when frozen: the gather and the LM head read them row-chunk by row-chunk. */
export function isRowChunkable(name: string): boolean {
  return name === 'model.embed_tokens.weight' || name === 'lm_head.weight';
}

/** Returns the stored name of chunk k of a table. */
export function rowChunkName(name: string, k: number): string {
  return `${name}#rows${k}`;
}

/**
 * Returns the rows per chunk of a (rows, width) table of bytesPerValue values so that each chunk
 * stays within maxBytes: a multiple of 4 (the LM head's matmul writes vec4 columns), or null when the
 * whole table already fits. Throws when not even 4 rows fit.
 */
export function rowsPerChunk(rows: number, width: number, bytesPerValue: number, maxBytes: number): number | null {
  if (rows * width * bytesPerValue <= maxBytes) return null;
  const fitting = Math.floor(maxBytes / (width * bytesPerValue) / 4) * 4;
  if (fitting < 4) throw new Error(`4 rows of ${width} values need ${4 * width * bytesPerValue} bytes, past the ${maxBytes} bytes a chunk may hold`);
  return fitting;
}

/**
 * Returns the shapes as stored: every chunkable tensor past maxBytes replaced by its row chunks (in
 * order, under rowChunkName), and for each table cut the chunks. Other tensors pass unchanged.
 */
export function splitRowChunks(
  shapes: Array<[string, number[]]>,
  bytesPerValue: number,
  maxBytes: number,
  chunkable: (name: string) => boolean = isRowChunkable,
): { shapes: Array<[string, number[]]>; chunks: Map<string, RowChunk[]> } {
  const stored: Array<[string, number[]]> = [];
  const chunks = new Map<string, RowChunk[]>();
  for (const [name, shape] of shapes) {
    const [rows, width] = shape as [number, number];
    const perChunk = chunkable(name) && shape.length === 2 ? rowsPerChunk(rows, width, bytesPerValue, maxBytes) : null;
    if (perChunk === null) {
      stored.push([name, shape]);
      continue;
    }
    const list: RowChunk[] = [];
    for (let firstRow = 0, k = 0; firstRow < rows; firstRow += perChunk, k++) {
      const chunk = { name: rowChunkName(name, k), firstRow, rows: Math.min(perChunk, rows - firstRow) };
      list.push(chunk);
      stored.push([chunk.name, [chunk.rows, width]]);
    }
    chunks.set(name, list);
  }
  return { shapes: stored, chunks };
}
