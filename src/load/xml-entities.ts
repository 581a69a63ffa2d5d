/**
 * A guard against XML entity attacks in RDF/XML input, run before the text reaches the RDF/XML
 * parser (oxigraph 0.5.11 expands internal entities without a bound: a "billion laughs" ontology of
 * a few hundred bytes took 2.9 GB and ended in a Rust panic). Entity declarations live in the
 * internal subset of the DOCTYPE (XML 1.0 §2.8, §4.2); ontologies written by Protégé use them as
 * IRI abbreviations (`<!ENTITY owl "http://www.w3.org/2002/07/owl#">`), which stay allowed.
 *
 * Refused, with the file and line of the declaration: external entities (`SYSTEM`/`PUBLIC`, which
 * would read other files), parameter entities (`<!ENTITY % …>`), entities that refer to themselves,
 * an entity whose replacement text expands to more than `maxEntityChars` characters, and (when the
 * whole document is given) more than `maxTotalChars` characters of expansion over all references.
 */
import { InputError } from '../common/errors.js';

/** Bounds of `checkXmlEntities`, in characters. */
interface EntityLimits {
  /** Largest expansion of one entity (default 10,000: IRI abbreviations are far shorter). */
  maxEntityChars: number;
  /** Largest expansion of all entity references of the document together (default 16 Mi). */
  maxTotalChars: number;
}

const DEFAULT_ENTITY_LIMITS: EntityLimits = { maxEntityChars: 10_000, maxTotalChars: 16 * 1024 * 1024 };

const lineAt = (text: string, offset: number) => {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
};

/**
 * Checks the DOCTYPE of an RDF/XML document (see the module comment).
 * @param text the document, or its beginning (at least up to the end of the DOCTYPE); with only
 *   the beginning (`complete: false`) the total expansion is not checked
 * @param file the file, for the error message
 * @param complete whether `text` is the whole document
 * @throws InputError naming the file and the line of the offending declaration
 */
export function checkXmlEntities(text: string, file: string, complete = true, limits: EntityLimits = DEFAULT_ENTITY_LIMITS): void {
  const doctype = text.indexOf('<!DOCTYPE');
  if (doctype === -1) return;
  // Only a DOCTYPE before the root element counts; anything else is not well-formed anyway.
  const open = text.indexOf('[', doctype);
  const gt = text.indexOf('>', doctype);
  if (open === -1 || (gt !== -1 && gt < open)) return; // no internal subset
  const close = text.indexOf(']', open);
  if (close === -1) {
    throw new InputError(complete ? 'DOCTYPE internal subset is not closed' : 'DOCTYPE internal subset too long to check (over 1 MiB): refused', { file, line: lineAt(text, doctype) });
  }
  const subset = text.slice(open + 1, close);
  const values = new Map<string, { value: string; line: number }>();
  const decl = /<!ENTITY\s+(%\s+)?([^\s"'>]+)\s+(?:"([^"]*)"|'([^']*)'|(SYSTEM|PUBLIC)\b)/g;
  for (let m; (m = decl.exec(subset));) {
    const line = lineAt(text, open + 1 + m.index);
    if (m[1]) throw new InputError(`parameter entity %${m[2]} in the DOCTYPE: refused (an RDF/XML file needs none)`, { file, line });
    if (m[5]) throw new InputError(`external entity ${m[2]} (${m[5]}) in the DOCTYPE: refused (it would read another file or URL)`, { file, line });
    if (!values.has(m[2])) values.set(m[2], { value: m[3] ?? m[4] ?? '', line }); // XML 1.0 §4.2: the first declaration binds
  }
  if (values.size === 0) return;
  const ref = /&([^#;\s&]+);/g;
  const expanded = new Map<string, number>();
  const sizeOf = (name: string, stack: string[]): number => {
    const known = expanded.get(name);
    if (known !== undefined) return known;
    const e = values.get(name);
    if (!e) return name.length + 2; // predefined (&lt; …) or undeclared: the parser decides
    if (stack.includes(name)) throw new InputError(`entity ${name} refers to itself (${[...stack, name].join(' → ')}): refused`, { file, line: e.line });
    let size = e.value.length;
    for (const m of e.value.matchAll(ref)) {
      size += sizeOf(m[1], [...stack, name]) - m[0].length;
      if (size > limits.maxEntityChars) break;
    }
    if (size > limits.maxEntityChars) {
      throw new InputError(`entity ${name} expands to more than ${limits.maxEntityChars} characters (an XML entity bomb?): refused`, { file, line: e.line });
    }
    expanded.set(name, size);
    return size;
  };
  for (const name of values.keys()) sizeOf(name, []);
  if (!complete) return;
  let total = 0;
  const body = text.slice(close);
  for (const m of body.matchAll(ref)) {
    total += expanded.get(m[1]) ?? 0;
    if (total > limits.maxTotalChars) {
      throw new InputError(`entity references expand to more than ${limits.maxTotalChars} characters in all (an XML entity bomb?): refused`, { file, line: lineAt(text, close + (m.index ?? 0)) });
    }
  }
}
