#!/usr/bin/env node
// `npm run docs:cli`: rewrites the option tables of docs/cli.md from the command definitions
// (src/cli/program.ts, compiled to dist/). tests/docs-cli.test.ts fails when they drift.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { program } from '../dist/cli/program.js';
import { withGeneratedOptions } from '../dist/cli/docs.js';

const file = fileURLToPath(new URL('../docs/cli.md', import.meta.url));
const before = fs.readFileSync(file, 'utf8');
const after = withGeneratedOptions(before, program());
if (after === before) console.log('docs/cli.md: up to date');
else {
  fs.writeFileSync(file, after);
  console.log('docs/cli.md: option tables rewritten');
}
