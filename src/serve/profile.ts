/**
 * Endpoint behaviour profiles: emulations of what real SPARQL endpoints do to federated clients,
 * after challenges C2 (uneven SPARQL 1.1 support: result-size limits, refused features) and C4
 * (latency, availability) of the FKGQA paper (section 1). Off by default: an endpoint without a
 * profile answers every query completely or fails explicitly; it never truncates (a silently
 * capped answer would look like a complete one to the federation engine).
 *
 * A profile file is JSON (`default`, `graphs`, `endpoints`; docs/serving-reference.md has its
 * fields); an endpoint's profile is `default`, overridden field by field by its graph's entry,
 * overridden by its own entry.
 */
import fs from 'node:fs';
import { InputError } from '../common/errors.js';
import { FEATURES, type Feature } from '../sparql/inspect.js';

/** What one endpoint does differently from a complete, always-available endpoint. */
export interface EndpointProfile {
  /** A label for reports, e.g. `"public-endpoint"`. */
  name?: string;
  /**
   * Result cap: a SELECT answer is cut after this many rows, a CONSTRUCT/DESCRIBE answer after this
   * many triples, and the cut is marked (response header `Fkgqa-Truncated`, and in SPARQL JSON/XML
   * results a `link` in the head, `urn:fkgqa:truncated:max-rows=N`).
   */
  maxRows?: number;
  /** Added delay before every answer of the endpoint, in ms. */
  latencyMs?: number;
  /** Extra delay drawn uniformly from [0, jitterMs) ms with the profile's seeded generator. */
  jitterMs?: number;
  /**
   * Share of queries (0–1) answered with `failureStatus` instead of running, drawn with the seeded
   * generator once for every query request that passes the text guard (a refused feature still
   * takes precedence over a failure).
   */
  failureRate?: number;
  /** HTTP status of a simulated failure (default 503). */
  failureStatus?: number;
  /** Features the endpoint refuses with 403, e.g. `["service"]` as many public endpoints do. */
  refuse?: Feature[];
  /** Seed of the generator behind `jitterMs` and `failureRate` (default 0); mixed with the endpoint id. */
  seed?: number;
}

/** The contents of a profile file (see the module comment). */
export interface ProfileConfig {
  default?: EndpointProfile;
  graphs?: Record<string, EndpointProfile>;
  endpoints?: Record<string, EndpointProfile>;
}

const KEYS = new Set(['name', 'maxRows', 'latencyMs', 'jitterMs', 'failureRate', 'failureStatus', 'refuse', 'seed']);

function checkProfile(p: unknown, where: string, file?: string): EndpointProfile {
  const fail = (msg: string): never => {
    throw new InputError(`${where}: ${msg}`, { file });
  };
  if (p === null || typeof p !== 'object' || Array.isArray(p)) fail('a profile must be a JSON object');
  const o = p as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!KEYS.has(k)) fail(`unknown field "${k}" (known: ${[...KEYS].join(', ')})`);
  const nonNegInt = (k: string, max = Number.MAX_SAFE_INTEGER) => {
    if (o[k] !== undefined && !(Number.isSafeInteger(o[k]) && (o[k] as number) >= 0 && (o[k] as number) <= max)) fail(`${k} must be an integer from 0 to ${max}`);
  };
  nonNegInt('maxRows');
  nonNegInt('latencyMs', 600_000);
  nonNegInt('jitterMs', 600_000);
  nonNegInt('seed');
  if (o.failureRate !== undefined && !(typeof o.failureRate === 'number' && o.failureRate >= 0 && o.failureRate <= 1)) fail('failureRate must be a number from 0 to 1');
  if (o.failureStatus !== undefined && !(Number.isInteger(o.failureStatus) && (o.failureStatus as number) >= 400 && (o.failureStatus as number) <= 599)) {
    fail('failureStatus must be an HTTP error status (400–599)');
  }
  if (o.name !== undefined && typeof o.name !== 'string') fail('name must be a string');
  if (o.refuse !== undefined) {
    if (!Array.isArray(o.refuse) || o.refuse.some((f) => !(FEATURES as readonly string[]).includes(f as string))) {
      fail(`refuse must be a list of features among ${FEATURES.join(', ')}`);
    }
  }
  return o as EndpointProfile;
}

/**
 * Checks a parsed profile configuration.
 * @throws InputError naming the file and the bad entry or field
 */
export function checkProfileConfig(config: unknown, file?: string): ProfileConfig {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw new InputError('a profile file must hold a JSON object', { file });
  const c = config as Record<string, unknown>;
  for (const k of Object.keys(c)) if (!['default', 'graphs', 'endpoints'].includes(k)) throw new InputError(`unknown top-level field "${k}" (known: default, graphs, endpoints)`, { file });
  if (c.default !== undefined) checkProfile(c.default, 'default', file);
  for (const level of ['graphs', 'endpoints'] as const) {
    const m = c[level];
    if (m === undefined) continue;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new InputError(`${level} must map names to profiles`, { file });
    for (const [name, p] of Object.entries(m)) checkProfile(p, `${level}.${name}`, file);
  }
  return c as ProfileConfig;
}

/**
 * Reads and checks a profile file.
 * @throws InputError when the file is missing, is not JSON, or holds an unknown field or a value out of range
 */
export function readProfileConfig(file: string): ProfileConfig {
  if (!fs.existsSync(file)) throw new InputError('profile file not found', { file });
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`not JSON: ${(e as Error).message}`, { file });
  }
  return checkProfileConfig(parsed, file);
}

/**
 * The profile of one endpoint: default < graph < endpoint, field by field; undefined when no field
 * is set (the endpoint behaves completely and reliably).
 */
export function profileFor(config: ProfileConfig | undefined, endpoint: string, graph: string): EndpointProfile | undefined {
  if (!config) return undefined;
  const merged: EndpointProfile = { ...config.default, ...config.graphs?.[graph], ...config.endpoints?.[endpoint] };
  const keys = Object.keys(merged)
    .filter((k) => merged[k as keyof EndpointProfile] !== undefined)
    .sort();
  if (keys.length === 0) return undefined;
  return Object.fromEntries(keys.map((k) => [k, merged[k as keyof EndpointProfile]])) as EndpointProfile;
}
