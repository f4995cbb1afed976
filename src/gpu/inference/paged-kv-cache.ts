/**
 * The paged KV cache of the WebGPU decoder, in plain TypeScript: the reference of the
 * `kv_cache_write` kernel, a reader that gathers one sequence's cached rows (so the existing
 * `attentionDecodeForward` is the reference of `attention_decode`), and the page allocator the
 * decoder uses. A cache is (pages, PAGE, KVD) per layer; a sequence owns a list of pages, its token
 * t lives in page pages[t / PAGE] at row t % PAGE. Page tables are stacked as (rows, MP) i32, MP the
 * most pages a sequence may hold. This is not a decoder: see webgpu-decoder.ts.
 */

/** Stores row n of k and v (N, KVD) at token positions[n] of the sequence with page table pageTable[rowSeq[n], :]. */
export function kvCacheWrite(
  keys: Float32Array, // (pages, PAGE, KVD)
  values: Float32Array, // (pages, PAGE, KVD)
  k: Float32Array, // (N, KVD)
  v: Float32Array, // (N, KVD)
  positions: Int32Array, // (N)
  rowSeq: Int32Array, // (N)
  pageTable: Int32Array, // (rows, MP)
  N: number,
  KVD: number,
  PAGE: number,
  MP: number,
): void {
  for (let n = 0; n < N; n++) {
    const position = positions[n]!;
    const page = pageTable[rowSeq[n]! * MP + Math.floor(position / PAGE)]!;
    const destination = (page * PAGE + (position % PAGE)) * KVD;
    keys.set(k.subarray(n * KVD, (n + 1) * KVD), destination);
    values.set(v.subarray(n * KVD, (n + 1) * KVD), destination);
  }
}

/** Returns tokens 0..length-1 of one sequence's cache (pages, PAGE, KVD) as contiguous rows (length, KVD). */
export function readPagedRows(cache: Float32Array, pages: ArrayLike<number>, length: number, KVD: number, PAGE: number): Float32Array {
  const rows = new Float32Array(length * KVD); // (length, KVD)
  for (let t = 0; t < length; t++) {
    const start = (pages[Math.floor(t / PAGE)]! * PAGE + (t % PAGE)) * KVD;
    rows.set(cache.subarray(start, start + KVD), t * KVD);
  }
  return rows;
}

/**
 * Hands out pages of a cache of `capacity` pages; page 0 is never handed out (the decoder's
 * scratch page, where padding rows write). Throws a message that says what to do when full.
 */
export class PageAllocator {
  private readonly freePages: number[] = [];

  constructor(
    readonly capacity: number,
    private readonly describe: (needed: number) => string,
  ) {
    for (let page = capacity - 1; page >= 1; page--) this.freePages.push(page);
  }

  /** Pages in use (the scratch page excluded). */
  get used(): number {
    return this.capacity - 1 - this.freePages.length;
  }

  /** Pages free. */
  get free(): number {
    return this.freePages.length;
  }

  /** Returns count free pages (ascending when the free list is unfragmented, so copies merge), or throws (taking none) when fewer are left. */
  take(count: number): number[] {
    if (count > this.freePages.length) throw new Error(this.describe(count - this.freePages.length));
    return this.freePages.splice(this.freePages.length - count, count).reverse();
  }

  /** Returns pages to the free list. */
  give(pages: readonly number[]): void {
    this.freePages.push(...pages);
  }
}
