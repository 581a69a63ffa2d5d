/**
 * The federation engines by name (`--federation-engine`) and the factory that creates one, loading
 * its implementation only then. The interface is in engine.ts; docs/federation.md describes the
 * engines, how they were chosen and where they disagree.
 */
import type { EngineSetup, FederationEngine } from './engine.js';

/**
 * The engines fkgqa knows, by `--federation-engine` name; the first is the default.
 * - `comunica`: Comunica 4.5.0 configured so that each SERVICE clause is evaluated once and joined
 *   locally (federation/comunica/config-service.json);
 * - `jena`: Apache Jena ARQ 4.5.0 from Debian's libapache-jena-java, in a JVM (federation/jena/);
 * - `comunica-default`: Comunica 4.5.0 in its own default configuration (bind joins planned on the
 *   endpoints' COUNT estimates, COUNT-based source selection; its SERVICE failures corrected as
 *   `comunica`'s): the engine of earlier fkgqa versions, a baseline for comparison only (it needs
 *   thousands of requests per query where the others need one per SERVICE clause).
 */
export const FEDERATION_ENGINES = ['comunica', 'jena', 'comunica-default'] as const;
/** One of FEDERATION_ENGINES. */
export type FederationEngineName = (typeof FEDERATION_ENGINES)[number];
/** The default engine. */
export const DEFAULT_FEDERATION_ENGINE: FederationEngineName = 'comunica';
/**
 * The engines `fkgqa verify --federation-engine all` cross-checks: every engine fit to run the
 * benchmark, i.e. all but the baseline `comunica-default` (name it explicitly to include it).
 */
export const CROSS_CHECKED_ENGINES: readonly FederationEngineName[] = ['comunica', 'jena'];

/** Whether a string names a known engine. */
function isFederationEngine(name: string): name is FederationEngineName {
  return (FEDERATION_ENGINES as readonly string[]).includes(name);
}

/**
 * Reads an engine list as `fkgqa verify --federation-engine` takes it: `all` (CROSS_CHECKED_ENGINES)
 * or names separated by commas (or given as several values), each known, without repeats.
 * @returns the engine names, in the order given
 * @throws Error naming an unknown engine and the known ones
 */
export function parseEngineList(value: string | readonly string[]): FederationEngineName[] {
  const names = (typeof value === 'string' ? [value] : value)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const out: FederationEngineName[] = [];
  for (const n of names) {
    const add = n === 'all' ? CROSS_CHECKED_ENGINES : isFederationEngine(n) ? [n] : undefined;
    if (!add) throw new Error(`unknown federation engine "${n}": one of ${FEDERATION_ENGINES.join(', ')}, or all (${CROSS_CHECKED_ENGINES.join(', ')})`);
    for (const a of add) if (!out.includes(a)) out.push(a);
  }
  if (out.length === 0) throw new Error(`no federation engine named: one of ${FEDERATION_ENGINES.join(', ')}, or all`);
  return out;
}

/**
 * Why an engine cannot run on this machine, or undefined when it can: `jena` needs Java and
 * Debian's Jena (`findJena`: the message names what is missing and the apt-get line); the Comunica
 * engines come with `npm ci`. Cheap (file checks); loads the engine's module.
 */
export async function engineUnavailable(name: FederationEngineName): Promise<string | undefined> {
  if (name !== 'jena') return undefined;
  const jena = (await import('./jena/engine.js')).findJena();
  return jena.ok ? undefined : jena.reason;
}

/**
 * Creates an engine by name (loading its implementation now). The engine starts its threads or
 * process at its first query or at `warm`; `close` stops them.
 * @throws Error for an unknown name (the CLI refuses unknown names before this, exit 2), or when
 *   the engine cannot run here (`jena` without Java or Jena: the message names what is missing and
 *   the apt-get line that installs it)
 */
export async function createEngine(name: string, setup: EngineSetup): Promise<FederationEngine> {
  switch (name) {
    case 'comunica':
    case 'comunica-default': {
      const { ComunicaEngine } = await import('./comunica/engine.js');
      return new ComunicaEngine(setup, name);
    }
    case 'jena': {
      const { JenaEngine } = await import('./jena/engine.js');
      return JenaEngine.create(setup);
    }
    default:
      throw new Error(`unknown federation engine "${name}": one of ${FEDERATION_ENGINES.join(', ')}`);
  }
}
