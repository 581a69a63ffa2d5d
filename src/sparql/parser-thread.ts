/**
 * The parser thread of src/sparql/parse.ts: parses long queries on a stack of
 * PARSER_THREAD_STACK_MB (sparqljs spreads long lists onto the stack) and answers each on the port
 * it was given, then wakes the caller, which waits on the shared flag (Atomics.wait).
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import { parseHere, type ParseReply, type SparqlParseOptions } from './parse.js';

const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };

/**
 * Replaces sparqljs's Wildcard (`SELECT *`: its termType is on the prototype, which a structured
 * clone drops) in projection lists by `{ termType: 'Wildcard' }`, which parse.ts makes a Wildcard
 * again. Iterative: the AST's depth is bounded, but not its width.
 */
function markWildcards(ast: unknown): void {
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        if ((node[i] as { termType?: unknown } | null)?.termType === 'Wildcard') node[i] = { termType: 'Wildcard', value: '*' };
        else stack.push(node[i]);
      }
      continue;
    }
    if ('termType' in node) continue;
    for (const v of Object.values(node)) stack.push(v);
  }
}

port.on('message', (req: { text: string; options: SparqlParseOptions }) => {
  let reply: ParseReply;
  try {
    reply = parseHere(req.text, req.options);
  } catch (e) {
    reply = { ok: false, kind: 'syntax', message: `the SPARQL parser failed: ${(e as Error)?.message ?? String(e)}` };
  }
  if (reply.ok) markWildcards(reply.ast);
  try {
    port.postMessage(reply);
  } catch (e) {
    // An AST that cannot cross threads (it cannot happen below the depth limits) is no syntax error.
    port.postMessage({ ok: false, kind: 'too-complex', message: `the parsed query could not be handed over (${(e as Error)?.message ?? String(e)})` } satisfies ParseReply);
  }
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
