import fs from 'node:fs';
import path from 'node:path';
import type * as RDF from '@rdfjs/types';
import { Writer } from 'n3';
import type { CompiledPattern, PatternMatcher } from '../analyze/match.js';
import { getHasher, SetChecksum } from '../common/hash.js';
import { scanTriples, type ByteProgress, type TripleFile } from '../load/triples.js';
import type { ShardAssigner } from './assign.js';
import { detach } from '../common/strings.js';

/** What was written to one slot. */
interface SlotOutput {
  /** Slot name (see ShardLayout.slots). */
  slot: string;
  /** Path of the written file (in the build's temporary directory). */
  file: string;
  /** Lines written (triples as read: a repeated input triple is written again, to the same slot). */
  lines: number;
}

/** The result of the assignment pass over one graph. */
export interface MaterializeResult {
  slots: SlotOutput[];
  /** The input as parsed: its triples as canonical N-Triples lines, count and multiset checksum. */
  input: { lines: number; checksum: string };
  /** For every pattern of the matcher: the slots holding at least one matching triple (E_t). */
  patternSlots: Set<number>[];
  /** Predicate IRI → slots holding its triples. */
  predicateSlots: Map<string, Set<number>>;
  /** Class IRI → slots holding the triples its instances' placement sends (predicate shards aside). */
  classSlots: Map<string, Set<number>>;
}

/** The N-Triples line of a triple (without newline), as n3 writes it: the canonical form fkgqa hashes and writes. */
function createLineWriter(): (t: { subject: RDF.Quad_Subject; predicate: RDF.Quad_Predicate; object: RDF.Quad_Object }) => string {
  const writer = new Writer({ format: 'N-Triples' });
  return (t) => writer.quadToString(t.subject, t.predicate, t.object).slice(0, -1);
}

const FLUSH_BYTES = 1 << 16;

/**
 * Second pass: streams the graph's data again, sends every triple to the slot the assigner gives,
 * and writes one N-Triples file per slot into `dir` (`<slot>.nt`, lines in input order). Computes
 * the multiset checksum of the input's lines (guarantee 1 compares it with the files on disk),
 * records which slots match each pattern (for fan-out) and where each predicate and class ended up
 * (to check that every rule is realised). Duplicates are removed later, per shard (a repeated
 * triple always lands in the same slot): see `verifyShards`.
 */
export async function materializeGraph(src: TripleFile, assigner: ShardAssigner, matcher: PatternMatcher, dir: string, onProgress?: ByteProgress): Promise<MaterializeResult> {
  const hasher = await getHasher();
  const line = createLineWriter();
  const slots = assigner.layout.slots;
  const files = slots.map((slot) => {
    const file = path.join(dir, `${slot}.nt`);
    return {
      slot,
      file,
      fd: fs.openSync(file, 'w'),
      // Lines are encoded straight into a byte buffer (no joined strings), written when full.
      buffer: Buffer.allocUnsafe(FLUSH_BYTES),
      buffered: 0,
      lines: 0,
    };
  });
  const flush = (f: (typeof files)[number]) => {
    if (f.buffered === 0) return;
    fs.writeSync(f.fd, f.buffer, 0, f.buffered);
    f.buffered = 0;
  };
  const input = new SetChecksum(hasher);
  const nSlots = slots.length;
  // Flags instead of sets on the hot path: pattern × slot, predicate × slot, class set × slot.
  const patternFlags = new Uint8Array(matcher.patterns.length * nSlots);
  interface PredicateEntry {
    slot: number | undefined;
    candidates: readonly CompiledPattern[];
    seen: Uint8Array;
  }
  const predicates = new Map<string, PredicateEntry>();
  const profile = assigner.profile;
  const setFlags = profile.classSets.map(() => new Uint8Array(nSlots));
  // Triples of one subject usually come together (sorted N-Triples, Turtle): remember the last one.
  let lastSubject = '';
  let lastIndex: number | undefined;
  try {
    await scanTriples(
      src,
      (t) => {
        const l = line(t);
        input.add(l);
        const p = t.predicate.value;
        let entry = predicates.get(p);
        if (!entry) {
          entry = { slot: assigner.predicateSlotOf(p), candidates: matcher.candidates(p), seen: new Uint8Array(nSlots) };
          predicates.set(detach(p), entry);
        }
        const subject = t.subject.value;
        if (subject !== lastSubject) {
          lastSubject = subject;
          lastIndex = profile.subjectIndex.get(subject);
        }
        const si = lastIndex;
        const subjectSlot = assigner.subjectSlotAt(si);
        const slot = entry.slot ?? subjectSlot;
        const f = files[slot];
        // A UTF-16 code unit takes at most 3 UTF-8 bytes.
        if (f.buffered + 3 * l.length + 1 > f.buffer.length) {
          flush(f);
          if (3 * l.length + 1 > f.buffer.length) f.buffer = Buffer.allocUnsafe(3 * l.length + 1);
        }
        f.buffered += f.buffer.write(l, f.buffered);
        f.buffer[f.buffered++] = 10;
        f.lines++;
        for (const c of entry.candidates) if (matcher.test(c, t)) patternFlags[c.index * nSlots + slot] = 1;
        entry.seen[slot] = 1;
        if (si !== undefined) setFlags[profile.subjectClassSet[si]][subjectSlot] = 1;
      },
      { onProgress },
    );
    for (const f of files) flush(f);
  } finally {
    for (const f of files) fs.closeSync(f.fd);
  }
  const flagged = (flags: Uint8Array, offset = 0) => {
    const out = new Set<number>();
    for (let s = 0; s < nSlots; s++) if (flags[offset + s]) out.add(s);
    return out;
  };
  const patternSlots = matcher.patterns.map((_, i) => flagged(patternFlags, i * nSlots));
  const predicateSlots = new Map([...predicates].map(([p, e]) => [p, flagged(e.seen)]));
  const classSlots = new Map<string, Set<number>>();
  profile.classSets.forEach((classes, set) => {
    if (set === 0) return;
    for (const c of classes) {
      let cs = classSlots.get(c);
      if (!cs) classSlots.set(c, (cs = new Set()));
      for (const s of flagged(setFlags[set])) cs.add(s);
    }
  });
  return {
    slots: files.map((f) => ({ slot: f.slot, file: f.file, lines: f.lines })),
    input: { lines: input.count, checksum: input.digest },
    patternSlots,
    predicateSlots,
    classSlots,
  };
}
