/** `fkgqa query`: flags → `query` (src/index.ts); the answer on stdout (table, JSON, CSV or TSV), what was done on stderr. */
import fs from 'node:fs';
import { InputError } from '../../common/errors.js';
import { counted } from '../../common/strings.js';
import { readTextInput } from '../../common/input.js';
import { query } from '../../index.js';
import { formatAnswer, type QueryFormat } from '../../query/query.js';
import { outputFormat } from '../options.js';
import { stderrProgress } from '../progress.js';

const requests = (r: Record<string, number>) => {
  const n = Object.values(r).reduce((x, y) => x + y, 0);
  return `${n} HTTP request${n === 1 ? '' : 's'}`;
};

export async function run(text: string | undefined, o: Record<string, any>): Promise<void> {
  const format = outputFormat(o, 'table') as QueryFormat;
  // `--endpoints a.json 'SELECT …'`: a variadic option takes the query too; a query is never a file name or URL.
  for (const k of ['endpoints', 'endpoint', 'sources']) {
    const xs = o[k] as string[] | undefined;
    if (text === undefined && xs && xs.length > 1 && /[\s{]/.test(xs[xs.length - 1])) text = xs.pop();
  }
  if (text !== undefined && o.file) throw new InputError('give the query as an argument or with --file, not both');
  if (text === undefined && !o.file) throw new InputError("no query: give it as an argument ('SELECT … WHERE { SERVICE <url> { … } }') or with --file q.rq (--file - reads stdin)");
  let q = text;
  if (o.file) {
    q = o.file === '-' ? fs.readFileSync(0, 'utf8') : readTextInput(o.file, 'query file');
  }
  if (!q!.trim()) throw new InputError('the query is empty', o.file ? { file: o.file } : {});
  if (!o.shards && !o.endpoints && !o.endpoint) o.shards = 'shards';
  const a = await query({
    query: q!,
    shards: o.shards,
    state: o.state,
    endpointsFiles: o.endpoints,
    urls: o.endpoint,
    timeoutMs: o.timeout,
    federationEngine: o.federationEngine,
    maxQueryChars: o.maxQueryChars,
    mixGraphs: o.mixGraphs === true,
    sources: o.sources,
  });
  process.stdout.write(formatAnswer(a.results, format));
  const n = a.results.boolean !== undefined ? 'ASK' : counted(a.results.results?.bindings.length ?? 0, a.form === 'graph' ? 'triple' : 'row');
  // An endpoint whose triples are held on another host than its URL's (its endpoints file's placement, e.g. a Virtuoso instance) is named with that host.
  const name = (t: (typeof a.targets)[number]) => (t.host && t.host !== new URL(t.url).host ? `${t.id}@${t.host}` : t.id);
  const how =
    a.route === 'direct'
      ? `direct to ${name(a.targets[0])}`
      : a.route === 'sources'
        ? `federation engine ${a.engine} selecting sources among ${a.targets.map(name).join(', ')}`
        : `federation engine ${a.engine} over ${a.targets.map(name).join(', ')}`;
  stderrProgress(o.quiet)?.(`fkgqa query: ${n} (${how}; ${Math.round(a.ms)} ms; ${requests(a.requests)})`);
}
