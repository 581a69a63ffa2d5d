/** `fkgqa verify`: flags → `verify` (src/index.ts); prints the report (text or JSON); exit 1 when an engine's answer differs from gold beyond ties. */
import { verify } from '../../index.js';
import type { FederationForm } from '../../verify/forms.js';
import { formatVerifyReport } from '../../verify/verify.js';
import { outputFormat, selectedQueries } from '../options.js';
import { stderrProgress } from '../progress.js';

export async function run(o: Record<string, any>): Promise<void> {
  const format = outputFormat(o);
  const report = await verify({
    shards: o.shards,
    endpoints: o.endpoints,
    state: o.state,
    kgs: o.kg,
    queries: selectedQueries(o.shards, o.question, o.query).queries,
    timeoutMs: o.timeout,
    forms: o.form as FederationForm[],
    federationEngine: o.federationEngine,
    progress: stderrProgress(o.quiet),
  });
  process.stdout.write(format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatVerifyReport(report));
  if (report.different > 0) process.exitCode = 1;
}
