import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { WEB_DIST, WEB_MANIFEST, WebManifest } from './manifest';

/** Every folder of web/ with a `main.ts` is a page set; its `style.css`, when present, is bundled beside it. */
function entryPoints(): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const set of fs.readdirSync(__dirname, { withFileTypes: true })) {
    if (!set.isDirectory() || set.name === 'dist' || set.name === 'shared') continue;
    for (const file of ['main.ts', 'style.css']) {
      const full = path.join(__dirname, set.name, file);
      if (fs.existsSync(full)) entries[`${set.name}${path.extname(file) === '.ts' ? '' : '-style'}`] = full;
    }
  }
  return entries;
}

/**
 * Builds every page set with esbuild (minified ES modules for current browsers) into `outdir` (not committed: one
 * script and one style sheet per set, named by content hash) and writes the manifest.
 */
export async function buildWeb(outdir = WEB_DIST): Promise<WebManifest> {
  fs.rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    entryPoints: entryPoints(),
    outdir,
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    entryNames: '[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
  });
  const manifest: WebManifest = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (!output.entryPoint) continue;
    const name = path.basename(file);
    const set = name.replace(/-[A-Z0-9]+\.(js|css)$/, '').replace(/-style$/, '');
    manifest[`${set}${path.extname(name)}`] = name;
  }
  fs.mkdirSync(outdir, { recursive: true });
  fs.writeFileSync(path.join(outdir, WEB_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** `tsx web/build.ts [outdir]`: `npm run build` puts the pages beside the compiled API (`dist/web/dist`). */
if (require.main === module) {
  const outdir = process.argv[2] ? path.resolve(process.argv[2]) : WEB_DIST;
  buildWeb(outdir).then(
    (manifest) => console.log(`web: built ${Object.keys(manifest).length} files into ${path.relative(process.cwd(), outdir)}`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
