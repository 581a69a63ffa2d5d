/**
 * The federation engines by name (`--federation-engine`) and the factory that creates one, loading
 * its implementation only then. The interface is in engine.ts.
 */
import type { EngineSetup, FederationEngine } from './engine.js';

/** The engines fkgqa knows, by `--federation-engine` name; the first is the default. */
export const FEDERATION_ENGINES = ['comunica'] as const;
/** One of FEDERATION_ENGINES. */
export type FederationEngineName = (typeof FEDERATION_ENGINES)[number];
/** The default engine. */
export const DEFAULT_FEDERATION_ENGINE: FederationEngineName = 'comunica';

/** Whether a string names a known engine. */
export function isFederationEngine(name: string): name is FederationEngineName {
  return (FEDERATION_ENGINES as readonly string[]).includes(name);
}

/**
 * Creates an engine by name (loading its implementation now). The engine starts its threads
 * lazily or at once, as it documents; `close` stops them.
 * @throws Error for an unknown name (the CLI refuses unknown names before this, exit 2)
 */
export async function createEngine(name: string, setup: EngineSetup): Promise<FederationEngine> {
  switch (name) {
    case 'comunica': {
      const { ComunicaEngine } = await import('./comunica/engine.js');
      return new ComunicaEngine(setup);
    }
    default:
      throw new Error(`unknown federation engine "${name}": one of ${FEDERATION_ENGINES.join(', ')}`);
  }
}
