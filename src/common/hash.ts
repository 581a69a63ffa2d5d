import crypto from 'node:crypto';
import fs from 'node:fs';
import xxhash from 'xxhash-wasm';

/** The xxhash-wasm functions, initialised once per process. */
export type Hasher = Awaited<ReturnType<typeof xxhash>>;

let hasherPromise: Promise<Hasher> | undefined;

/** Returns the shared xxhash-wasm instance (xxh32/xxh64, UTF-8 input). */
export function getHasher(): Promise<Hasher> {
  hasherPromise ??= xxhash();
  return hasherPromise;
}

const MASK64 = (1n << 64n) - 1n;

/**
 * An order-independent checksum of a set of N-Triples lines: the sum modulo 2^64 of xxh64(line)
 * (seed 0) over the lines, together with their count. Two sets of lines with the same count and sum
 * are, up to hash collisions, the same multiset.
 */
export class SetChecksum {
  count = 0;
  private sum = 0n;
  constructor(private readonly hasher: Hasher) {}
  /** Adds one line (without its newline). */
  add(line: string): void {
    this.addHash(this.hasher.h64(line));
  }
  /** Adds an already computed xxh64 value. */
  addHash(h: bigint): void {
    this.count++;
    this.sum = (this.sum + h) & MASK64;
  }
  /** Adds another checksum's lines (for combining shards). */
  merge(other: SetChecksum): void {
    this.count += other.count;
    this.sum = (this.sum + other.sum) & MASK64;
  }
  /** The sum as 16 hex digits. */
  get digest(): string {
    return this.sum.toString(16).padStart(16, '0');
  }
}

/**
 * sha256 of a file (hex), read in 1 MiB chunks so that large shard files do not have to fit in
 * memory at once.
 */
export function sha256OfFile(file: string): string {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}
