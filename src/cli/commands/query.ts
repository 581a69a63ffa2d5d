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

/** The variadic options of `fkgqa query`: what a value of each is, whether a text is one (else it is the query the option took), and a value to show in an example. */
const VARIADIC: Record<string, { as: string; takes: (v: string) => boolean; example: string }> = {
  endpoints: { as: 'an endpoints file (it exists)', takes: (v) => fs.existsSync(v), example: 'FILE' },
  endpoint: { as: 'an endpoint URL', takes: (v) => /^https?:\/\/\S+$/i.test(v), example: 'URL' },
  sources: { as: 'a source (all, a graph name, an endpoint id or URL)', takes: (v) => /^[\w.:/%@~+-]+$/.test(v), example: 'all' },
};

/** A value as a message shows it: on one line, its first 40 characters. */
const shown = (v: string) => {
  const line = v.replace(/\s+/g, ' ').trim();
  return line.length > 40 ? `${line.slice(0, 40)}…` : line;
};

export async function run(text: string | undefined, o: Record<string, any>): Promise<void> {
  const format = outputFormat(o, 'table') as QueryFormat;
  // `--endpoints a.json 'SELECT …'`: a variadic option takes the query too. Without a query argument or --file, the
  // last of its values is the query when it is not what the option takes (an existing file, an http(s) URL, a source's name).
  if (text === undefined && !o.file) {
    const given = Object.entries(VARIADIC).filter(([k]) => ((o[k] as string[] | undefined)?.length ?? 0) > 1);
    const eater = given.find(([k, what]) => !what.takes((o[k] as string[]).at(-1)!));
    if (eater) text = (o[eater[0]] as string[]).pop();
    else if (given.length > 0) {
      const [k, what] = given[0];
      const xs = o[k] as string[];
      throw new InputError(
        `no query: the last value of --${k}, ${xs.at(-1)}, is read as ${what.as}; give the query before the options, or after -- (fkgqa query --${k} ${xs.slice(0, -1).join(' ')} -- 'SELECT …'), or with --file`,
      );
    }
    // `--sources 'SELECT …'`: the option's one value is the query, and the option has none of its own (no query found above).
    const only = text === undefined && Object.entries(VARIADIC).find(([k, what]) => (o[k] as string[] | undefined)?.length === 1 && !what.takes((o[k] as string[])[0]));
    if (only) {
      const [k, what] = only;
      throw new InputError(
        `no query: the query (${shown((o[k] as string[])[0])}) was taken as the value of --${k}, which is ${what.as}; ` +
          `give --${k} its value and put -- before the query (fkgqa query --${k} ${what.example} -- 'SELECT …'), or give the query with --file`,
      );
    }
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
