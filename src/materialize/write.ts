import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PatternMatcher } from '../analyze/match.js';
import { FingerprintSet } from '../common/fingerprints.js';
import { getHasher, SetChecksum } from '../common/hash.js';
import { scanTriples, type ByteProgress, type TripleFile } from '../load/triples.js';
import type { ShardAssigner } from './assign.js';
import { createLineWriter, fingerprint } from './profile.js';

/** What was written to one slot. */
export interface SlotOutput {
  /** Slot name (see ShardLayout.slots). */
  slot: string;
  /** Path of the written file (in the build's temporary directory). */
  file: string;
  /** Triples written (distinct). */
  triples: number;
  /** Bytes written. */
  bytes: number;
  /** sha256 of the file (hex). */
  sha256: string;
  /** SetChecksum digest of the lines written. */
  checksum: string;
}

/** The result of the assignment pass over one graph. */
export interface MaterializeResult {
  slots: SlotOutput[];
  /** Duplicate triples skipped. */
  duplicates: number;
  /** For every pattern of the matcher: the slots holding at least one matching triple (E_t). */
  patternSlots: Set<number>[];
  /** Predicate IRI → slots holding its triples. */
  predicateSlots: Map<string, Set<number>>;
  /** Class IRI → slots holding the triples its instances' placement sends (predicate shards aside). */
  classSlots: Map<string, Set<number>>;
}

const FLUSH_BYTES = 1 << 16;

/**
 * Second pass: streams the graph's data again, drops duplicate triples, sends every triple to the
 * slot the assigner gives, and writes one N-Triples file per slot into `dir` (`<slot>.nt`, lines in
 * input order). Records which slots match each pattern (for fan-out) and where each predicate and
 * class ended up (to check that every rule is realised).
 */
export async function materializeGraph(
  src: TripleFile,
  assigner: ShardAssigner,
  matcher: PatternMatcher,
  dir: string,
  onProgress?: ByteProgress,
): Promise<MaterializeResult> {
  const hasher = await getHasher();
  const line = createLineWriter();
  const slots = assigner.layout.slots;
  const files = slots.map((slot) => {
    const file = path.join(dir, `${slot}.nt`);
    return {
      slot,
      file,
      fd: fs.openSync(file, 'w'),
      buffer: [] as string[],
      buffered: 0,
      bytes: 0,
      sha: crypto.createHash('sha256'),
      checksum: new SetChecksum(hasher),
    };
  });
  const flush = (f: (typeof files)[number]) => {
    if (f.buffer.length === 0) return;
    const chunk = Buffer.from(f.buffer.join(''), 'utf8');
    fs.writeSync(f.fd, chunk);
    f.sha.update(chunk);
    f.bytes += chunk.length;
    f.buffer = [];
    f.buffered = 0;
  };
  const seen = new FingerprintSet();
  let duplicates = 0;
  const patternSlots = matcher.patterns.map(() => new Set<number>());
  const predicateSlots = new Map<string, Set<number>>();
  const classSlots = new Map<string, Set<number>>();
  const profile = assigner.profile;
  const setSlotsSeen = new Map<number, Set<number>>();
  try {
    await scanTriples(
      src,
      (t) => {
        const l = line(t);
        const fp = fingerprint(hasher, l);
        if (!seen.add(fp.hi, fp.lo)) {
          duplicates++;
          return;
        }
        const p = t.predicate.value;
        const si = profile.subjectIndex.get(t.subject.value);
        const subjectSlot = assigner.subjectSlotAt(si);
        const slot = assigner.predicateSlotOf(p) ?? subjectSlot;
        const f = files[slot];
        f.buffer.push(l, '\n');
        f.buffered += l.length + 1;
        f.checksum.addHash(fp.h);
        if (f.buffered >= FLUSH_BYTES) flush(f);
        matcher.match(t, (i) => patternSlots[i].add(slot));
        let ps = predicateSlots.get(p);
        if (!ps) predicateSlots.set(p, (ps = new Set()));
        ps.add(slot);
        if (si !== undefined) {
          const set = profile.subjectClassSet[si];
          if (set !== 0) {
            let ss = setSlotsSeen.get(set);
            if (!ss) setSlotsSeen.set(set, (ss = new Set()));
            ss.add(subjectSlot);
          }
        }
      },
      onProgress,
    );
    for (const f of files) flush(f);
  } finally {
    for (const f of files) fs.closeSync(f.fd);
  }
  for (const [set, ss] of setSlotsSeen) {
    for (const c of profile.classSets[set]) {
      let cs = classSlots.get(c);
      if (!cs) classSlots.set(c, (cs = new Set()));
      for (const s of ss) cs.add(s);
    }
  }
  return {
    slots: files.map((f) => ({
      slot: f.slot,
      file: f.file,
      triples: f.checksum.count,
      bytes: f.bytes,
      sha256: f.sha.digest('hex'),
      checksum: f.checksum.digest,
    })),
    duplicates,
    patternSlots,
    predicateSlots,
    classSlots,
  };
}
