import { ApplicationFailure } from '@temporalio/activity';
import { DataSource } from 'typeorm';
import { runHealthChecks } from '../../db/integrations/health';
import {
  StreamCopyInput, claimStreamCopy, mintStreamSourceToken, recordStreamUid, streamableMedia,
} from '../../db/integrations/stream-copies';
import { Config } from '../../runtime/config';
import { heartbeating } from '../platform/activity-cancellation';

export interface IntegrationActivityDeps {
  dataSource: DataSource;
  config: Config;
  stopping?: AbortSignal;
}

const HOST_TIMEOUT_MS = 30_000;

/** Activities of the integrations domain. A repeated health run warns nothing twice (one row per check, subject and day). */
export function createIntegrationActivities({ dataSource, config, stopping }: IntegrationActivityDeps) {
  return {
    async runProofHealthChecks(productId: string): Promise<number> {
      return runHealthChecks(dataSource, productId, config.proofHealthConsentExpiryDays);
    },

    /**
     * Hands the host a source link to the original (Cloudflare Stream's "upload from URL": POST
     * `<api>/copy` `{url, meta}` → `result.uid`) and keeps the uid. A copy already accepted is not
     * asked again; a video no longer allowed to be shown is not copied (null).
     */
    async copyToStreamHost(input: StreamCopyInput): Promise<string | null> {
      if (!config.proofStreamApiUrl) return null;
      const claims = {
        m: input.mediaAssetId, v: input.versionId, p: input.productId, exp: Math.floor(Date.now() / 1000) + config.proofStreamLinkTtlSeconds,
      };
      if (!(await streamableMedia(dataSource, claims))) return null;
      const { uid: known } = await claimStreamCopy(dataSource, input);
      if (known) return known;
      const url = `${config.proofStreamSourceBaseUrl}/api/public/proof/stream/source/${await mintStreamSourceToken(dataSource, claims)}`;
      // Abandoned, too, when the activity is cancelled or its worker stops: Temporal retries it elsewhere.
      const res = await heartbeating((signal) => fetch(`${config.proofStreamApiUrl}/copy`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(config.proofStreamApiToken ? { authorization: `Bearer ${config.proofStreamApiToken}` } : {}) },
        body: JSON.stringify({ url, meta: { name: input.mediaAssetId, mediaAssetId: input.mediaAssetId } }),
        signal: AbortSignal.any([AbortSignal.timeout(HOST_TIMEOUT_MS), ...(signal ? [signal] : [])]),
      }), stopping);
      if (!res.ok) {
        const message = `the video host answered ${res.status} to the copy request`;
        // A refusal of the request itself (bad token, bad body) does not heal by retrying.
        if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) throw ApplicationFailure.nonRetryable(message);
        throw new Error(message);
      }
      const body = await res.json().catch(() => null) as { result?: { uid?: unknown } } | null;
      const uid = body?.result?.uid;
      if (typeof uid !== 'string' || !uid) throw ApplicationFailure.nonRetryable('the video host accepted the copy without a uid');
      await recordStreamUid(dataSource, input.mediaAssetId, uid);
      return uid;
    },
  };
}
