/**
 * A set of 64-bit fingerprints (two uint32 halves), used to drop duplicate triples while streaming
 * without keeping the triples themselves: 8 bytes per distinct triple at a load factor of at most
 * 0.5, i.e. about 16–32 bytes per triple. Two different triples share a fingerprint with probability
 * about n²/2^65 (n = 10 million triples: 3·10^-6); the build's checksum verification cannot see such
 * a collision, which is documented as the one way a triple could be dropped.
 */
export class FingerprintSet {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private used: Uint8Array;
  private mask: number;
  /** Number of fingerprints in the set. */
  size = 0;

  constructor(initialCapacity = 1 << 16) {
    let cap = 1;
    while (cap < initialCapacity * 2) cap <<= 1;
    this.hi = new Uint32Array(cap);
    this.lo = new Uint32Array(cap);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
  }

  /** Adds the fingerprint (hi, lo); returns true if it was not in the set before. */
  add(hi: number, lo: number): boolean {
    if ((this.size + 1) * 2 > this.used.length) this.grow();
    return this.insert(hi >>> 0, lo >>> 0);
  }

  private insert(hi: number, lo: number): boolean {
    let i = (lo ^ Math.imul(hi, 0x9e3779b1)) & this.mask;
    for (;;) {
      if (!this.used[i]) {
        this.used[i] = 1;
        this.hi[i] = hi;
        this.lo[i] = lo;
        this.size++;
        return true;
      }
      if (this.hi[i] === hi && this.lo[i] === lo) return false;
      i = (i + 1) & this.mask;
    }
  }

  private grow(): void {
    const { hi, lo, used } = this;
    const cap = used.length * 2;
    this.hi = new Uint32Array(cap);
    this.lo = new Uint32Array(cap);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
    this.size = 0;
    for (let i = 0; i < used.length; i++) if (used[i]) this.insert(hi[i], lo[i]);
  }
}
