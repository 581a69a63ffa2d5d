/**
 * Text of the KGVoyager search index: what words an IRI stands for, and which words of a question
 * are content words. Spider4SPARQL has no `rdfs:label` at all, so the index reads the IRIs' local
 * names (KGVoyager paper, section 3.1, searches "IRIs or labels"; this file defines how an IRI is
 * read).
 */

/**
 * The local part of an IRI that names the thing: the last path segment, and the fragment when
 * there is one (`http://valuenet/ontop/singer#song_name` → `singer#song_name`,
 * `http://valuenet/ontop/singer` → `singer`, `http://xmlns.com/foaf/0.1/name` → `name`). Query
 * strings are kept as part of the segment. Percent-escapes are decoded where they are valid UTF-8.
 * @param iri an absolute IRI
 * @returns the local part, or the whole IRI when it has no `/` or `#` after the scheme
 */
export function localPart(iri: string): string {
  let s = iri;
  try {
    s = decodeURIComponent(iri);
  } catch {
    /* keep the escapes */
  }
  const hash = s.indexOf('#');
  const beforeHash = hash >= 0 ? s.slice(0, hash) : s;
  const fragment = hash >= 0 ? s.slice(hash + 1) : '';
  const path = beforeHash.replace(/^[a-z][a-z0-9+.-]*:(\/\/[^/]*)?/i, '');
  const segments = path.split('/').filter((x) => x.length > 0);
  const last = segments.length > 0 ? segments[segments.length - 1] : '';
  if (fragment && last) return `${last}#${fragment}`;
  return fragment || last || s;
}

/**
 * Splits text into lower-case words: on every character that is not a letter or digit (so on
 * `/ # _ -`, spaces and punctuation), and inside words at camel-case boundaries (`songName` →
 * `song name`, `HTMLParser` → `html parser`) and between letters and digits (`shard1` → `shard 1`).
 * @returns the words in order (may repeat); empty for text without letters or digits
 */
export function words(text: string): string[] {
  const spaced = text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
    .replace(/(\p{L})(\p{N})/gu, '$1 $2')
    .replace(/(\p{N})(\p{L})/gu, '$1 $2');
  return spaced
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/**
 * The words an IRI stands for in the index: the words of its local part
 * (`http://valuenet/ontop/singer#song_name` → `singer song name`).
 */
export function iriText(iri: string): string {
  return words(localPart(iri)).join(' ');
}

/**
 * English stop words left out of a question when it is split into content words (the benchmark's
 * per-word search). A short list of function words and question words: the words of a Spider
 * question that never name a table or column.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or not no nor of in on at to for from by with without about as into onto than then ' +
    'is are was were be been being am do does did done have has had having can could will would shall should may might must ' +
    'what which who whom whose when where why how many much more most less least each every all any some both either neither ' +
    'this that these those there here it its they them their theirs he him his she her we us our you your i me my ' +
    'list show give find return tell display' +
    ' also only just ever very too so such other another same own please' +
    ' if else but while during after before over under between among per via s'
  ).split(/\s+/),
);

/**
 * The content words of a question: its words (see `words`) without stop words and without pure
 * numbers, deduplicated in order of first appearance.
 */
export function contentWords(question: string): string[] {
  const out: string[] = [];
  for (const w of words(question)) if (!STOP_WORDS.has(w) && !/^\p{N}+$/u.test(w) && !out.includes(w)) out.push(w);
  return out;
}

/**
 * Harman's S-stemmer (D. Harman, "How effective is suffixing?", JASIS 42(1), 1991): the plural
 * rules only, applied to the first that matches — `ies` → `y` (not after `e` or `a`), `es` → `e`
 * (not after `a`, `e` or `o`), `s` → `` (not after `u` or `s`). `singers` → `singer`, `countries`
 * → `country`, `status` stays. Used on both sides of the BM25 index.
 */
export function sStem(word: string): string {
  if (word.length > 3 && word.endsWith('ies') && !/[ea]ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('es') && !/[aeo]es$/.test(word)) return word.slice(0, -1);
  if (word.length > 2 && word.endsWith('s') && !/[us]s$/.test(word)) return word.slice(0, -1);
  return word;
}
