import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { recordSource } from '../../db/integrations/sources';
import { createServiceKey } from '../../db/platform/service-keys';
import { HONEST, marker, withReply } from '../support/ai-fixtures';
import { asTeammate, call, eventually, withKey } from '../support/fixtures';
import { approve, requestApproval } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import {
  CollectionTenant, OpenDraft, asDraft, createCollectionTenant, customerCall, fillDraft, mp4Bytes, pngBytes, sha256, startDraft, submitDraft, wavBytes,
} from '../support/collection';
import { route } from '../support/routes';

/**
 * Every table of the schema, said once: whether it can hold a customer's words or contact details
 * from a story (and so must be emptied of them by the purge), or never does. A table added without
 * being named here fails the test, so whoever adds it decides.
 */
const HOLDS_STORY_TEXT: Record<string, string> = {
  proof_items: 'customer e-mail and name: nulled',
  proof_versions: 'content and semantic diff: {} (rows and content hashes stay)',
  consent_grants: 'consent evidence: nulled',
  proof_sources: 'captured text, title, attribution: nulled',
  collection_drafts: 'every field (text, title, answers, identity): {}',
  collection_caption_versions: 'caption text of the recordings: emptied',
  collection_media: 'rows name the bytes in the media store, which are erased',
  collection_upload_parts: 'rows of parts whose bytes are in the store: removed with them',
  collection_interviews: 'the e-mail the interview went to: nulled',
  collection_interview_answers: 'answer text: nulled; recorded answers erased from the store',
  collection_customer_decisions: 'the reason a customer declined a wording: nulled',
  proof_corrections: 'the customer\'s correction message: emptied',
  proof_revocations: 'the revocation request text: nulled',
  proof_assets: 'quote cards and case studies quoting the item: content {} and file emptied',
  proof_ai_operations: 'AI input and result over the item: emptied',
  proof_brand_mentions: 'a mention the item was imported from: text and author emptied',
  idempotency_records: 'a stored answer may echo a story: kept 24 h at most, long before any window closes',
};
const NEVER_STORY_TEXT: Record<string, string> = {
  teammate_sign_in_links: 'a console sign-in link: its digest, the teammate and when it was used',
  // Ids, hashes, states, counters and settings.
  migrations: '', organizations: '', products: '', environments: '', service_keys: '', teammates: '', teammate_sessions: '',
  identity_nonces: '', rate_limit_windows: '', intake_counters: '', intake_limits: '', outbox_events: 'allow-listed ids',
  workflow_commands: 'ids and times', workflow_failures: '', inbox_stream_leases: 'which end user holds a stream',
  collection_nojs_submissions: 'a form\'s submission key, a random token the page makes', proof_render_versions: '', proof_signing_keys: '',
  proof_events: 'the ledger: ids and enums, never text', proof_receipts: 'names the wording by hash only',
  proof_approval_requests: 'the reviewer\'s reason', proof_placements: '', proof_placement_items: '', proof_engagement_counts: '',
  proof_engagement_beacons: '', proof_health_findings: '', proof_hooks: '', proof_moments: '', proof_opportunities: '',
  proof_paid_invoices: '', proof_processor_events: '', proof_request_deliveries: '', proof_request_tokens: '',
  proof_stream_copies: 'ids of the video host\'s copy', proof_stripe_connections: '', proof_value_events: 'the host app\'s event',
  proof_crm_deals: 'CRM deals', proof_rewards: 'the workspace\'s incentive', proof_routings: 'a teammate\'s note',
  proof_requests: 'a teammate\'s request to a person, before any story', webhook_endpoints: '', webhook_deliveries: 'allow-listed ids',
  webhook_attempts: 'the receiver\'s answers', end_users: 'the host app\'s end users',
  // Collection setup, written by teammates; secrets and suppressions are digests and ids.
  collection_flows: '', collection_flow_versions: '', collection_questions: '', collection_question_versions: '',
  consent_templates: '', consent_template_versions: '', collection_domains: '', collection_welcome_videos: '',
  collection_secrets: '', collection_suppressions: '', collection_prompt_choices: '', collection_uploads: 'ids, sizes, hashes',
  collection_caption_tracks: 'states', collection_interview_uploads: 'ids, sizes, hashes',
  // The customer loop and rooms: feedback and conversations, never written from a story.
  signals: '', threads: '', thread_messages: '', features: '', feature_votes: '', feature_follows: '', feature_signal_links: '',
  feature_merge_items: 'ids of what a merge moved', feature_not_duplicates: 'ids',
  releases: '', release_receipts: '', inbox_items: '', rooms: '', room_members: '', room_messages: '', room_events: '',
  room_attachments: '', room_canvas_versions: '', room_agent_runs: '', room_approvals: '', room_appeals: '', room_documents: '',
  room_handoffs: '', room_jobs: '', room_knowledge: '', room_moderation_cases: '', room_moderation_reports: '', room_polls: '',
  room_poll_responses: '', room_promises: '', room_reactions: '', room_solve_participants: '', room_solve_sessions: '',
};

/** The tables whose rows hold `m` in their text (bytea columns searched as bytes). */
async function tablesHolding(m: string): Promise<string[]> {
  const columns: Array<{ table_name: string; column_name: string; data_type: string }> = await ctx.dataSource.query(
    `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`);
  const tables = [...new Set(columns.map((c) => c.table_name))];
  const holding: string[] = [];
  for (const table of tables) {
    const bytes = columns.filter((c) => c.table_name === table && c.data_type === 'bytea')
      .map((c) => ` OR position(convert_to($1, 'UTF8') IN r."${c.column_name}") > 0`).join('');
    const [{ n }] = await ctx.dataSource.query(`SELECT count(*)::int AS n FROM "${table}" r WHERE strpos(lower(r::text), $1) > 0${bytes}`, [m]);
    if (n > 0) holding.push(table);
  }
  return holding.sort();
}

/** Files of the media store (the suite's folder) whose bytes hold `m`. */
function storeFilesHolding(m: string): string[] {
  const root = path.join(ctx.config.dataDir, 'media');
  if (!fs.existsSync(root)) return [];
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (fs.readFileSync(file).includes(m)) found.push(path.relative(root, file));
    }
  };
  walk(root);
  return found;
}

/** `bytes` with the marker written into their payload, past the header a type sniff reads. */
const marked = (bytes: Buffer, m: string): Buffer => {
  bytes.write(` ${m} `, 200, 'latin1');
  return bytes;
};

const PART = 64 * 1024;

describe('proof: the purge erases every copy of a deleted item\'s words', function () {
  this.timeout(120_000);
  let t: CollectionTenant;
  let sourcesKey: string;

  before(async () => {
    t = await createCollectionTenant();
    sourcesKey = (await createServiceKey(ctx.dataSource, {
      organizationId: t.organizationId, productId: t.product.id, environment: 'production',
      scopes: ['service:sources:read', 'service:proof:read', 'service:proof:read_private'],
    })).secret;
  });

  it('names every table as holding story text or not', async () => {
    const tables: Array<{ table_name: string }> = await ctx.dataSource.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`);
    const named = new Set([...Object.keys(HOLDS_STORY_TEXT), ...Object.keys(NEVER_STORY_TEXT)]);
    const unnamed = tables.map((r) => r.table_name).filter((n) => !named.has(n)).sort();
    assert.deepEqual(unnamed, [], 'a new table: say in HOLDS_STORY_TEXT or NEVER_STORY_TEXT whether it can hold a customer\'s words, and purge it if so');
    const stale = [...named].filter((n) => !tables.some((r) => r.table_name === n));
    assert.deepEqual(stale, [], 'tables named here that no longer exist');
    assert.deepEqual(Object.keys(HOLDS_STORY_TEXT).filter((n) => n in NEVER_STORY_TEXT), []);
  });

  async function upload(d: OpenDraft, kind: 'image' | 'audio', file: Buffer) {
    const opened = await customerCall(asDraft(d, {
      method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads`, payload: { kind, size: file.length, sha256: sha256(file), partSize: PART },
    }));
    assert.equal(opened.statusCode, 201, opened.body);
    const { upload: u, uploadToken } = opened.json().data;
    for (let n = 1; (n - 1) * PART < file.length; n++) {
      const put = await customerCall({
        method: 'PUT', url: `/api/proof/collect/drafts/${d.id}/uploads/${u.id}?part=${n}`, payload: file.subarray((n - 1) * PART, n * PART),
        headers: { 'x-upload-token': uploadToken, 'content-type': 'application/octet-stream' },
      });
      assert.equal(put.statusCode, 200, put.body);
    }
    const done = await customerCall({ method: 'POST', url: `/api/proof/collect/drafts/${d.id}/uploads/${u.id}`, headers: { 'x-upload-token': uploadToken } });
    assert.equal(done.json().data?.upload?.status, 'complete', done.body);
    return u.id as string;
  }

  it('a story whose words reached every table and the media store keeps none of them once its window closes', async () => {
    const m = marker();
    const words = `We cut onboarding from 9 days to 2 and save about $1,200 a month. Support answers within four hours. ${m}`;

    // The customer's draft: text, title, answers, identity, an image and a recording with captions.
    const d = await startDraft(t);
    await fillDraft(t, d, {
      text: words, title: `Faster onboarding ${m}`, rating: 5,
      answers: { [t.questionId]: `We stopped copying spreadsheets ${m}` },
      identity: { name: `Ada ${m}`, company: `Analytical ${m}`, title: 'CTO', email: `${m}@example.com` },
    });
    await upload(d, 'image', marked(pngBytes(70_000), m));
    const audioId = await upload(d, 'audio', marked(wavBytes(100_000), m));
    const captions = `/api/proof/collect/drafts/${d.id}/uploads/${audioId}/captions`;
    assert.equal((await customerCall(asDraft(d, { method: 'POST', url: captions, payload: {} }))).statusCode, 202);
    await eventually(async () => (await customerCall(asDraft(d, { method: 'GET', url: captions }))).json().data.status === 'ready');
    const corrected = await customerCall(asDraft(d, {
      method: 'PUT', url: captions, payload: { baseVersion: 1, language: 'en', cues: [{ startMs: 0, endMs: 1200, text: `We shipped ${m}` }] },
    }));
    assert.equal(corrected.statusCode, 201, corrected.body);
    const submitted = await submitDraft(d);
    assert.equal(submitted.statusCode, 201, submitted.body);
    const { proofItemId: itemId, originalVersionId: versionId, controlToken } = submitted.json().data;

    // The customer writes back through the control link.
    const control = (payload: object) => customerCall({ method: 'POST', url: '/api/proof/collect/control', headers: { 'x-control-token': controlToken },
      payload });
    assert.equal((await control({ action: 'request_correction', proofItemId: itemId, message: `My title is CTO ${m}` })).statusCode, 201);
    assert.equal((await control({ action: 'decline_wording', proofItemId: itemId, versionId, reason: `Not my words ${m}` })).statusCode, 200);

    // An interview about the story, answered by text and by a recording.
    const made = await call(asTeammate(t.owner, {
      method: 'POST', url: '/api/workspace/proof/interviews', payload: { productId: t.product.id, proofItemId: itemId, email: `${m}@example.com`,
        questions: [{ text: 'Before?' }, { text: 'Show us.' }] },
    }));
    assert.equal(made.statusCode, 201, made.body);
    const interview = (payload: object) => customerCall({
      method: 'POST', url: '/api/proof/interview', headers: { 'x-interview-token': made.json().data.interviewToken }, payload,
    });
    assert.equal((await interview({ questionId: 'q1', text: `We copied spreadsheets ${m}` })).statusCode, 200);
    const video = marked(mp4Bytes(40_000), m);
    const opened = await interview({ action: 'start_upload', questionId: 'q2', size: video.length, sha256: sha256(video) });
    assert.equal(opened.statusCode, 201, opened.body);
    const recorded = await customerCall({
      method: 'PUT', url: `/api/proof/interview/uploads/${opened.json().data.upload.id}`, payload: video,
      headers: { 'x-upload-token': opened.json().data.uploadToken, 'content-type': 'application/octet-stream' },
    });
    assert.equal(recorded.statusCode, 201, recorded.body);

    // Approved by a person; a quote card and an AI summary are made of it.
    assert.equal((await requestApproval(t, itemId, versionId)).statusCode, 200);
    assert.equal((await approve(t, itemId, versionId)).statusCode, 200);
    const card = await call(withKey(t.key, { method: 'POST', url: '/api/v1/proof/assets/generate',
      payload: { proofItemId: itemId, channel: 'website', excerpt: `four hours. ${m}` } }));
    assert.equal(card.statusCode, 201, card.body);
    const summary = await withReply(m, { json: HONEST }, () => call(withKey(t.key, { method: 'POST', url: `/api/v1/proof/items/${itemId}/summarize` })));
    assert.ok(summary.statusCode < 500, summary.body);

    // A source record of the story, written as its origins write them (a collected story writes none itself today).
    await recordSource(ctx.dataSource.manager, {
      organizationId: t.organizationId, productId: t.product.id, system: 'proof_import', externalId: `import-${itemId}`, kind: 'testimonial',
      capturedAt: new Date(), capturedText: words, title: `Faster onboarding ${m}`, attribution: { name: `Ada ${m}` },
      links: { proofItemId: itemId, versionId }, reuse: 'allowed_with_consent', actor: { type: 'system', id: null },
    });
    const sources = () => call(withKey(sourcesKey, { method: 'GET', url: route('/api/v1/sources', {}, `?proofItemId=${itemId}`) }));
    assert.ok((await sources()).body.includes(m), 'the source serves the words while the item lives');
    const reached = await tablesHolding(m);
    assert.deepEqual(reached, [
      'collection_caption_versions', 'collection_customer_decisions', 'collection_drafts', 'collection_interview_answers',
      'collection_interviews', 'proof_ai_operations', 'proof_assets', 'proof_corrections', 'proof_items', 'proof_sources', 'proof_versions',
    ], 'the story reached each table that can hold it');
    assert.ok(storeFilesHolding(m).length >= 2, 'the media store holds the uploads and the recorded answer');

    // Deleted with a short window; the purge erases every copy.
    const shortWindow = await ctx.buildApp({ proofDeletionRecoveryMs: 300 });
    const deleted = await call(asTeammate(t.owner, { method: 'DELETE', url: `/api/workspace/proof/items/${itemId}` }), shortWindow);
    assert.equal(deleted.statusCode, 200, deleted.body);
    await eventually(async () => (await ctx.dataSource.query(
      `SELECT 1 FROM proof_events WHERE proof_item_id = $1 AND event_type = 'proof.item.purged'`, [itemId])).length > 0, 30_000);
    await eventually(async () => storeFilesHolding(m).length === 0, 10_000).catch(() => undefined);
    assert.deepEqual(storeFilesHolding(m), [], 'no file of the media store holds the words');
    assert.deepEqual(await tablesHolding(m), [], 'no table holds the words');
    const [media] = await ctx.dataSource.query(
      `SELECT count(*)::int AS n, count(erased_at)::int AS erased FROM collection_media WHERE id IN
         (SELECT asset_id FROM collection_uploads WHERE draft_id = $1 UNION SELECT media_id FROM collection_interview_answers WHERE media_id IS NOT NULL
           AND interview_id = $2)`, [d.id, made.json().data.interview.id]);
    assert.deepEqual(media, { n: 3, erased: 3 }, 'every medium of the story is marked erased');

    // What the ledger keeps: ids, hashes and receipts, without the words.
    const [version] = await ctx.dataSource.query(`SELECT content, content_hash FROM proof_versions WHERE id = $1`, [versionId]);
    assert.deepEqual(version.content, {});
    assert.match(version.content_hash, /^sha256:/);
    assert.ok((await ctx.dataSource.query(`SELECT 1 FROM proof_receipts WHERE proof_item_id = $1`, [itemId])).length > 0);
    const [source] = (await sources()).json().data;
    assert.deepEqual([source.capturedText, source.title, source.attribution, source.policy.reuse], [null, null, null, 'blocked']);
    assert.ok(source.provenance.some((p: { step: string }) => p.step === 'erased'));
  });
});
