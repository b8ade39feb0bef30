#!/usr/bin/env node
// The operator CLI is TypeScript; tsx loads it without a build step. The project's tsconfig is named
// explicitly so that entity decorators compile the same from any working directory.
const path = require('node:path');
process.env.TSX_TSCONFIG_PATH = path.join(__dirname, '..', 'tsconfig.json');
try {
  require('tsx/cjs');
  require('./sv.ts');
} catch (err) {
  console.error(`sv: could not load: ${err && err.message ? err.message : String(err)}`);
  process.exit(1);
}
