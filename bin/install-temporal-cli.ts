import { loadConfig } from '../runtime/config';
import { resolveTemporalCli } from '../runtime/temporal-cli';

// Finds the Temporal CLI or builds it with Go into the per-user folder (docs/temporal.md#temporal-server-binary).
const found = resolveTemporalCli(loadConfig(), (line) => console.log(`[sv] ${line}`));
console.log(found ? `[sv] Temporal CLI: ${found}` : '[sv] no Temporal CLI and no Go: the SDK will try to download a dev server');
