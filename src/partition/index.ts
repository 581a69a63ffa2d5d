/**
 * The partition stage (section 4 of the FKGQA paper) as one library: `partition(options)` is
 * `fkgqa partition`; the stages of one graph are in graph.ts, the options in options.ts, the
 * presets in presets.ts, what is written in manifest.ts, benchmark.ts and output.ts.
 */
export { partition, validatePartitionOptions } from './partition.js';
export { DEFAULT_PARTITION_OPTIONS, methodOptionsOf, type PartitionOptions } from './options.js';
export { DEFAULT_METHOD_OPTIONS, PRESETS, resolveMethodOptions, type MethodOptions, type Preset, type ResolvedMethodOptions } from './presets.js';
export { byShardNumber, type GraphBuild, type GraphManifest, type GraphTimings, type ManifestQuery, type ManifestShard, type PartitionResult } from './manifest.js';
export { BENCHMARK_FIELDS, type BenchmarkEntry } from './benchmark.js';
export { digestTree, isBuildEntry } from './output.js';
export { buildGraph, type GraphContext } from './graph.js';
