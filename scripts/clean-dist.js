#!/usr/bin/env node
// Removes dist/ before a build, so that no module of an earlier layout stays behind (a stale
// module would still be importable and would count in the code digest of build.json).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
fs.rmSync(fileURLToPath(new URL('../dist', import.meta.url)), { recursive: true, force: true });
