/**
 * Where the script of a worker thread is. Tests run the TypeScript sources (`src/`), but a worker
 * always runs compiled JavaScript, from `dist/`.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The path of a compiled worker script.
 * @param rel the script's path relative to the compiled `dist/` folder, e.g. `serve/pool-thread.js`
 * @throws Error when the script is missing (the package was not built: `npm run build`)
 */
export function compiledScript(rel: string): string {
  const here = fileURLToPath(import.meta.url);
  const script = here.endsWith('.ts') ? fileURLToPath(new URL(`../../dist/${rel}`, import.meta.url)) : fileURLToPath(new URL(`../${rel}`, import.meta.url));
  if (!fs.existsSync(script)) throw new Error(`worker script ${script} is missing: run npm run build`);
  return script;
}
