/**
 * The VoID descriptions and the catalogue of a build as a running `fkgqa serve` publishes them: the
 * build's files (written by `partition`/`describe`, never changed by serving) with the live endpoint
 * URLs filled in, in memory. Each shard's extended VoID is read back (`readVoid`), given its URL
 * (`void:sparqlEndpoint` and an `sd:Service`) and rendered again (`renderVoid`) — the same rendering
 * `describe` uses, so the text is what `describe --endpoint-base` would have written.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
// The modules themselves, not describe/index.js: serve's start-up does not load describe's clients
// (oxigraph's node build compiles its WebAssembly module on import) nor its statistics.
import { readJsonIfExists } from '../build/open.js';
import { catalogueFileTexts, voidFiles } from '../describe/catalogue.js';
import type { ShardDescription } from '../describe/model.js';
import { readVoid, renderVoid, type VoidVariant } from '../describe/void-turtle.js';

/** One shard endpoint to describe: where its VoID is in the build, and its live URL. */
export interface LiveShard {
  /** Endpoint id `<kg>-shard<N>`. */
  id: string;
  graph: string;
  /** `shard<N>`. */
  shard: string;
  /** The endpoint URL now. */
  url: string;
}

/** A file's identity for the cache: a changed size or mtime means re-reading. */
const stamp = (file: string): string | undefined => {
  try {
    const s = fs.statSync(file);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined;
  }
};

/**
 * Renders VoID and catalogue with live URLs, caching every rendering until its source file changes
 * (a build described later by `fkgqa describe` is picked up on the next request).
 */
export class LiveDescriptions {
  private readonly cache = new Map<string, { stamp: string; text: string; description?: ShardDescription }>();
  private readonly prefixes = new Map<string, string>();

  /**
   * @param dir the build folder
   * @param shards the shard endpoints, with their URLs
   */
  constructor(
    private readonly dir: string,
    private readonly shards: LiveShard[],
  ) {}

  /** The empty prefix a graph's VoID is written with (`options.defaultPrefix` of its manifest), or none. */
  private prefixOf(graph: string): string | undefined {
    if (!this.prefixes.has(graph)) {
      // The manifest was read when serving started; without it the VoID is written without a prefix.
      const m = readJsonIfExists<{ options?: { defaultPrefix?: string } }>(path.join(this.dir, graph, 'manifest.json'));
      this.prefixes.set(graph, m?.options?.defaultPrefix ?? '');
    }
    return this.prefixes.get(graph) || undefined;
  }

  /** The shard's description from its extended VoID file, with the live URL; undefined when the build has no VoID for it. */
  private description(s: LiveShard): ShardDescription | undefined {
    const file = path.join(this.dir, voidFiles(s.graph, s.shard).voidExtended);
    const st = stamp(file);
    if (!st) return undefined;
    const key = `d:${s.id}`;
    const hit = this.cache.get(key);
    if (hit?.stamp === st) return hit.description;
    const d = { ...readVoid(fs.readFileSync(file, 'utf8'), file), endpoint: s.url };
    this.cache.set(key, { stamp: st, text: '', description: d });
    return d;
  }

  /** True when the build has a VoID file for this shard. */
  has(s: LiveShard): boolean {
    return stamp(path.join(this.dir, voidFiles(s.graph, s.shard).void)) !== undefined;
  }

  /**
   * The shard's VoID (Turtle) with its live endpoint URL.
   * @param variant `standard` (served at `/.well-known/void`) or `extended` (with linksets)
   * @returns undefined when the build has no VoID file for the shard
   * @throws InputError when the VoID file does not read back
   */
  void(s: LiveShard, variant: VoidVariant = 'standard'): string | undefined {
    if (!this.has(s)) return undefined;
    const d = this.description(s);
    if (!d) return undefined;
    const key = `v:${variant}:${s.id}`;
    const st = stamp(path.join(this.dir, voidFiles(s.graph, s.shard).voidExtended))!;
    const hit = this.cache.get(key);
    if (hit?.stamp === st) return hit.text;
    const text = renderVoid(d, variant, this.prefixOf(s.graph));
    this.cache.set(key, { stamp: st, text });
    return text;
  }

  /**
   * sha256 (hex) of the shard's VoID as served (`void(s)`, live URL included): the placement's digest
   * in endpoints.json, so that a reader can tell which description an endpoint had when listed.
   * @returns null when the build has no VoID file for the shard
   */
  digest(s: LiveShard): string | null {
    const text = this.void(s);
    return text === undefined ? null : createHash('sha256').update(text).digest('hex');
  }

  /**
   * The catalogue (`catalogue.ttl` or `catalogue.json` of the build) with the live URLs of every
   * shard served; shards without a VoID file are left out, as the build's catalogue leaves them.
   * @returns undefined when the build has no catalogue
   */
  catalogue(file: 'catalogue.ttl' | 'catalogue.json'): string | undefined {
    const st = stamp(path.join(this.dir, file));
    if (!st) return undefined;
    const stamps = [st, ...this.shards.map((s) => stamp(path.join(this.dir, voidFiles(s.graph, s.shard).voidExtended)) ?? '-')].join('|');
    const key = `c:${file}`;
    const hit = this.cache.get(key);
    if (hit?.stamp === stamps) return hit.text;
    const descriptions = this.shards.map((s) => this.description(s)).filter((d): d is ShardDescription => d !== undefined);
    const text = catalogueFileTexts(descriptions).get(file)!;
    this.cache.set(key, { stamp: stamps, text });
    return text;
  }
}
