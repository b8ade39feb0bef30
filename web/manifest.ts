import fs from 'node:fs';
import path from 'node:path';

/**
 * Where the built pages are: `web/dist/` beside the sources, and `dist/web/dist/` in a production build (this
 * module compiled to `dist/web/`), so the API finds them the same way in both.
 */
export const WEB_DIST = path.join(__dirname, 'dist');
export const WEB_MANIFEST = 'manifest.json';

/** `<set>.js` / `<set>.css` → the file name under WEB_DIST (e.g. `customer-3FQ2K1.js`). */
export type WebManifest = Record<string, string>;

/** The manifest of the last build, or null when the pages were never built here. */
export function readManifest(dir = WEB_DIST): WebManifest | null {
  const file = path.join(dir, WEB_MANIFEST);
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as WebManifest) : null;
}
