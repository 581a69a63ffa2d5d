/**
 * The configuration of the KGVoyager tool set (a type only: the MCP context refers to it without
 * importing the tools, so that context.ts and kgvoyager/ form no import cycle).
 */
import type { EmbedderSpec } from './embedder.js';
import type { KgVoyagerOptions } from './core.js';

/** How the KGVoyager tool set is configured (the `--embedder`, `--rrf-k`, … options of `fkgqa mcp`). */
export interface KgVoyagerSetup {
  /** The dense side (default the built-in n-gram embedder). */
  embedder?: EmbedderSpec;
  /** Retrieval and bounds (default `KGVOYAGER_DEFAULTS`). */
  options?: Partial<KgVoyagerOptions>;
}
