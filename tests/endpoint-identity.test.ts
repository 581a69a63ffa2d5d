import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endpointKey, sameEndpoint } from '../src/common/http-client.js';
import { findEndpoint, openRegistry, readEndpointsFile, registryFromUrls } from '../src/federation/registry.js';
import { routeQuery } from '../src/federation/routing.js';
import { tmpDir } from './helpers.js';

/** One notion of endpoint identity: every comparison of endpoint urls goes through `endpointKey`. */
const S1 = 'http://127.0.0.1:7600/library-shard1/sparql';
const S2 = 'http://127.0.0.1:7600/library-shard2/sparql';
/** Spellings of S1: scheme in capitals, a `.` segment, `%2D` for `-`, a port with a leading zero, `127.1`, loopback names, a trailing slash. */
const SPELLINGS = [
  'HTTP://127.0.0.1:7600/library-shard1/sparql',
  'http://127.0.0.1:7600/./library-shard1/sparql',
  'http://127.0.0.1:7600/library%2Dshard1/sparql',
  'http://127.0.0.1:07600/library-shard1/sparql',
  'http://127.1:7600/library-shard1/sparql',
  'http://localhost:7600/library-shard1/sparql',
  'http://LOCALHOST.:7600/library-shard1/sparql',
  'http://[::1]:7600/library-shard1/sparql',
  'http://127.0.0.1:7600/library-shard1/sparql/',
];

describe('endpoint identity: endpointKey', () => {
  it('gives every spelling of one endpoint one key, loopback names one host; other hosts, schemes and reserved encodings stay apart', () => {
    for (const u of SPELLINGS) expect([u, endpointKey(u)]).toEqual([u, S1]);
    // Other hosts of 127.0.0.0/8 are other hosts (serves bind them apart on one machine); a reserved %2F is no `/`.
    for (const u of [
      'http://127.0.0.2:7600/library-shard1/sparql',
      'https://127.0.0.1:7600/library-shard1/sparql',
      'http://127.0.0.1:7601/library-shard1/sparql',
      'http://127.0.0.1:7600/library-shard1%2Fsparql',
    ])
      expect([u, sameEndpoint(u, S1)]).toEqual([u, false]);
    expect(endpointKey('http://127.0.0.1:7600/x%2fy')).toBe('http://127.0.0.1:7600/x%2Fy');
  });
});

describe('endpoint identity: the registry and the routing of SERVICE IRIs', () => {
  const reg = registryFromUrls([S1, S2]);
  const hints = { maxQueryChars: 8000 };

  it('findEndpoint recognises every spelling of a registered url as that endpoint', () => {
    for (const u of SPELLINGS) expect([u, findEndpoint(reg, u)?.url]).toEqual([u, S1]);
    expect(findEndpoint(reg, 'http://127.0.0.2:7600/library-shard1/sparql')).toBeUndefined();
  });

  it('a SERVICE IRI spelling a registered endpoint otherwise is routed to it, the query naming it by its registered url', () => {
    for (const u of SPELLINGS) {
      // The quick route (tokens) and the parsed route: one target, the registered endpoint.
      for (const quick of [true, false]) {
        const lone = routeQuery(`SELECT * WHERE { SERVICE <${u}> { ?s ?p ?o } }`, reg, hints, { quick });
        expect([u, quick, lone.ok && lone.route, lone.ok && lone.targets.map((t) => t.url)]).toEqual([u, quick, 'direct', [S1]]);
      }
      // Through the federation engine: the query it is given names the registered url, never the spelling.
      const join = routeQuery(`SELECT * WHERE { SERVICE <${u}> { ?s ?p ?o } SERVICE <${S2}> { ?o ?q ?x } }`, reg, hints);
      expect([u, join.ok && join.route, join.ok && join.targets.map((t) => t.id)]).toEqual([u, 'federation', ['library-shard1', 'library-shard2']]);
      expect(join.ok && [join.query.includes(`<${S1}>`), join.query.includes(`<${u}>`)]).toEqual([true, u === S1]);
    }
  });

  it('an unregistered SERVICE IRI with the path of a registered endpoint is named with how its url differs', () => {
    const other = (u: string) => {
      const r = routeQuery(`SELECT * WHERE { SERVICE <${u}> { ?s ?p ?o } }`, reg, hints);
      return !r.ok && [r.errorClass, /Did you mean <([^>]*)> \(([^)]*)\)/.exec(r.message)?.slice(1)];
    };
    expect(other('http://127.0.0.1:1/library-shard1/sparql')).toEqual(['unknown-endpoint', [S1, 'library-shard1, the same path on another host or port']]);
    expect(other('https://127.0.0.1:7600/library%2Dshard1/sparql')).toEqual(['unknown-endpoint', [S1, 'library-shard1, the same path by another scheme']]);
    // Credentials make another endpoint (registered urls have none): refused, named.
    expect(other('http://user:pw@127.0.0.1:7600/library-shard1/sparql')).toEqual([
      'unknown-endpoint',
      [S1, 'library-shard1, the same path with a user name or password, which no registered endpoint has'],
    ]);
    // Endpoints told apart by port alone (serve --port-per-endpoint): the one on the same port, else no guess.
    const byPort = registryFromUrls(['http://127.0.0.1:7701/sparql', 'http://127.0.0.1:7702/sparql']);
    const guess = (u: string) => {
      const r = routeQuery(`SELECT * WHERE { SERVICE <${u}> { ?s ?p ?o } }`, byPort, hints);
      return !r.ok && [r.errorClass, /Did you mean <([^>]*)>/.exec(r.message)?.[1]];
    };
    expect(guess('http://127.0.0.1:7799/sparql')).toEqual(['unknown-endpoint', undefined]);
    expect(guess('http://127.0.0.9:7702/sparql')).toEqual(['unknown-endpoint', 'http://127.0.0.1:7702/sparql']);
  });

  it('--endpoint URLs: the id is read from the normal form of the path; two spellings of one endpoint are one, under the first', () => {
    const r = registryFromUrls(['http://127.0.0.1:7600/library%2Dshard1/sparql', S1, 'http://localhost:7600/library-shard1/sparql/', S2]);
    expect(r.endpoints.map((e) => [e.id, e.url, e.graph, e.shard])).toEqual([
      ['library-shard1', 'http://127.0.0.1:7600/library%2Dshard1/sparql', 'library', 'shard1'],
      ['library-shard2', S2, 'library', 'shard2'],
    ]);
  });
});

describe('endpoint identity: an endpoints file and --endpoint URLs read together', () => {
  const dir = tmpDir('fkgqa-identity-');
  const entry = (id: string, graph: string, shard: string, url: string) => ({ id, graph, role: 'shard', shard, url, triples: 1, profile: null });
  const file = path.join(dir, 'endpoints.json');
  fs.writeFileSync(file, JSON.stringify({ endpoints: [entry('library-shard1', 'library', 'shard1', S1), entry('library-shard2', 'library', 'shard2', S2)] }));

  it('an --endpoint naming an entry in another spelling is that entry, under the file\'s url and id (not "two endpoints are named", nor a second id)', () => {
    for (const u of ['http://127.0.0.1:7600/library%2Dshard1/sparql', `${S1}/`, 'http://localhost:7600/library-shard1/sparql', 'HTTP://127.1:7600/./library-shard1/sparql']) {
      const r = openRegistry({ endpointsFiles: [file], urls: [u] });
      expect([u, r.endpoints.map((e) => [e.id, e.url])]).toEqual([
        u,
        [
          ['library-shard1', S1],
          ['library-shard2', S2],
        ],
      ]);
      expect(r.endpoints[0].listing?.entry).toBe(0);
    }
  });

  it('refuses two entries listing one url (in any spelling) under two ids, in one file or two, naming both ids and the url', () => {
    const twice = path.join(dir, 'one-url-two-ids.json');
    fs.writeFileSync(
      twice,
      JSON.stringify({ endpoints: [entry('library-shard1', 'library', 'shard1', S1), entry('library-shard2', 'library', 'shard2', 'HTTP://localhost:7600/./library%2Dshard1/sparql')] }),
    );
    expect(() => openRegistry({ endpointsFiles: [twice] })).toThrow(
      `two endpoints have one url, HTTP://localhost:7600/./library%2Dshard1/sparql: library-shard1 (endpoints[0] of ${twice}) and library-shard2 (endpoints[1] of ${twice}); one url is one endpoint: list it once, under one id`,
    );
    const other = path.join(dir, 'shard3-at-shard1.json');
    fs.writeFileSync(other, JSON.stringify({ endpoints: [entry('library-shard3', 'library', 'shard3', S1)] }));
    expect(() => openRegistry({ endpointsFiles: [file, other] })).toThrow(
      `two endpoints have one url, ${S1}: library-shard1 (endpoints[0] of ${file}) and library-shard3 (endpoints[0] of ${other}); one url is one endpoint: list it once, under one id`,
    );
    // One entry in two files (same id, same url): one endpoint.
    expect(openRegistry({ endpointsFiles: [file, file] }).endpoints.map((e) => e.id)).toEqual(['library-shard1', 'library-shard2']);
  });

  it("refuses a shard entry whose id is not its graph and shard (its answers and faults would be another shard's)", () => {
    const swapped = path.join(dir, 'ids-swapped.json');
    fs.writeFileSync(swapped, JSON.stringify({ endpoints: [entry('library-shard2', 'library', 'shard1', S1), entry('library-shard1', 'library', 'shard2', S2)] }));
    expect(() => readEndpointsFile(swapped)).toThrow(
      `not an endpoints file written by fkgqa serve: endpoints[0]: the id "library-shard2" is not its graph and shard ("library", "shard1"): a shard's id is <graph>-<shard>, here "library-shard1"`,
    );
  });
});
