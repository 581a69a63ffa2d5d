/**
 * Filling endpoint URLs into the VoID catalogue (`<shards>/catalogue.json`, written by the VoID
 * build, issue 4) once the endpoints are up. Isolated on purpose: the catalogue's format belongs to
 * the VoID build, and this only sets one field of the entries it recognises.
 */
import fs from 'node:fs';
import { writeJson } from '../common/output.js';

/**
 * Sets the `endpoint` field of every catalogue entry that names one of the endpoints: an object
 * whose `id`, `name` or `endpoint` (when not already a URL) equals an endpoint id such as
 * `world_1-shard2`, or whose `graph` and `shard` fields give `world_1` and `shard2`. Entries are
 * found anywhere in the JSON (arrays and nested objects); everything else is left as it was. The
 * file is rewritten only when something changed.
 * @param file path of `catalogue.json`; nothing happens when it does not exist
 * @param urls endpoint id → endpoint URL
 * @returns how many entries were updated (0 when the file does not exist)
 * @throws Error when the file exists but is not JSON
 */
export function fillCatalogueEndpoints(file: string, urls: ReadonlyMap<string, string>): number {
  if (!fs.existsSync(file)) return 0;
  const catalogue: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  let updated = 0;
  let changed = false;
  const idOf = (o: Record<string, unknown>): string | undefined => {
    for (const k of ['id', 'name', 'endpoint']) {
      const v = o[k];
      if (typeof v === 'string' && urls.has(v)) return v;
    }
    if (typeof o.graph === 'string' && typeof o.shard === 'string' && urls.has(`${o.graph}-${o.shard}`)) return `${o.graph}-${o.shard}`;
    return undefined;
  };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    const id = idOf(o);
    if (id !== undefined) {
      updated++;
      if (o.endpoint !== urls.get(id)) {
        o.endpoint = urls.get(id);
        changed = true;
      }
      return;
    }
    for (const v of Object.values(o)) visit(v);
  };
  visit(catalogue);
  if (changed) writeJson(file, catalogue);
  return updated;
}
