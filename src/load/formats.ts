import path from 'node:path';

/** RDF serialisations fkgqa reads. */
export type RdfFormat = 'n-triples' | 'turtle' | 'rdf-xml';

/** Media types of the formats, as oxigraph names them. */
export const MEDIA_TYPE: Record<RdfFormat, string> = {
  'n-triples': 'application/n-triples',
  turtle: 'text/turtle',
  'rdf-xml': 'application/rdf+xml',
};

/** File extensions recognised for each format, in order of preference when several files exist. */
export const EXTENSIONS: Record<RdfFormat, string[]> = {
  'n-triples': ['.nt'],
  turtle: ['.ttl'],
  'rdf-xml': ['.rdf', '.owl', '.xml'],
};

/** The format of a file judged by its extension, or undefined for an unknown extension. */
export function formatOf(file: string): RdfFormat | undefined {
  const ext = path.extname(file).toLowerCase();
  for (const [format, exts] of Object.entries(EXTENSIONS) as [RdfFormat, string[]][]) {
    if (exts.includes(ext)) return format;
  }
  return undefined;
}
