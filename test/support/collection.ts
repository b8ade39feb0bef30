import { createHash, randomBytes } from 'node:crypto';
import { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { publishTemplateVersion } from '../../db/collection/consent-templates';
import { createFlow, publishFlow } from '../../db/collection/flows';
import { createQuestion } from '../../db/collection/questions';
import { listenOnLoopback } from './fixtures';
import { PlacementTenant, createPlacementTenant } from './proof-fixtures';
import { ctx } from './root-hooks';

export interface CollectionTenant extends PlacementTenant {
  flowId: string;
  publicId: string;
  flowVersionId: string;
  templateVersionId: string;
  wordingHash: string;
  questionId: string;
}

export const WORDING = 'I agree that Acme may show my story, with my name and company, on its website and in its product.';

/** A workspace with a live flow: one required long-text question, a five-star rating, a consent template. */
export async function createCollectionTenant(): Promise<CollectionTenant> {
  const tenant = await createPlacementTenant();
  const who = { organizationId: tenant.organizationId, teammateId: tenant.owner.id };
  const template = await publishTemplateVersion(ctx.dataSource, who, {
    productId: tenant.product.id, name: 'Standard release', wording: WORDING,
    terms: {
      displayModes: ['full_name', 'first_name', 'initials', 'anonymous'], identityFields: ['name', 'company', 'title'],
      channels: ['website', 'in_app', 'email'], media: ['text', 'video', 'audio', 'image'], paidUseAllowed: false,
      translationAllowed: true, geography: ['*'], validityDays: null,
    },
  } as Parameters<typeof publishTemplateVersion>[2]);
  const question = await createQuestion(ctx.dataSource, who, { text: 'What changed for you?', kind: 'long_text' });
  const settings = { collectPageUrl: ctx.config.collectPageUrl, monthlyAllowance: 1000 };
  const flow = await createFlow(ctx.dataSource, who, {
    productId: tenant.product.id, name: 'Customer stories',
    definition: {
      mediaKinds: ['text', 'video', 'audio', 'image'],
      questions: [{ questionId: question.questionId, version: 1, required: true }],
      rating: { scale: 'five_star', required: false },
      consentTemplateVersionId: template.id,
      identityFields: ['name', 'company', 'title'],
    },
  }, settings);
  const published = await publishFlow(ctx.dataSource, who, flow.id, flow.draftRevision);
  return {
    ...tenant, flowId: flow.id, publicId: flow.publicId, flowVersionId: published.flowVersion.id, templateVersionId: template.id,
    wordingHash: template.wordingHash, questionId: question.questionId,
  };
}

export function customerCall(opts: InjectOptions, app: FastifyInstance = ctx.app): Promise<LightMyRequestResponse> {
  return app.inject(opts);
}

export interface OpenDraft { id: string; session: string; body: Record<string, any> }

export async function startDraft(t: CollectionTenant, app: FastifyInstance = ctx.app): Promise<OpenDraft> {
  const res = await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: t.publicId } }, app);
  if (res.statusCode !== 201) throw new Error(`draft failed: ${res.statusCode} ${res.body}`);
  const data = res.json().data;
  return { id: data.draft.id, session: data.draftSession, body: data };
}

export const asDraft = (d: OpenDraft, opts: InjectOptions): InjectOptions =>
  ({ ...opts, headers: { ...opts.headers, 'x-draft-session': d.session } });

/** Fills the draft so it can be submitted: text, the required answer, consent, identity, a rating. */
export async function fillDraft(t: CollectionTenant, d: OpenDraft, extra: object = {}, app: FastifyInstance = ctx.app) {
  const res = await customerCall(asDraft(d, {
    method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`,
    payload: {
      text: 'Onboarding went from nine days to two.', title: 'Faster onboarding', rating: 5, consentAccepted: true,
      answers: { [t.questionId]: 'We stopped copying spreadsheets.' },
      identity: { name: 'Ada Lovelace', company: 'Analytical Ltd', title: 'CTO', email: 'ada@example.com' },
      ...extra,
    },
  }), app);
  if (res.statusCode !== 200) throw new Error(`patch failed: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

export async function submitDraft(d: OpenDraft, app: FastifyInstance = ctx.app) {
  return customerCall(asDraft(d, { method: 'POST', url: `/api/proof/collect/drafts/${d.id}/submit`, payload: {} }), app);
}

/** A PNG that file-type recognises (signature, IHDR, then one IDAT chunk of random bytes), `size` bytes long. */
export function pngBytes(size = 300_000): Buffer {
  const header = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
  const dataLength = size - header.length - 12;
  const idat = Buffer.alloc(8);
  idat.writeUInt32BE(dataLength, 0);
  idat.write('IDAT', 4, 'latin1');
  return Buffer.concat([header, idat, randomBytes(dataLength), randomBytes(4)]);
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A WAV file that file-type recognises (RIFF/WAVE, a PCM fmt chunk, then data of random bytes), `size` bytes long. */
export function wavBytes(size = 100_000): Buffer {
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'latin1');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8); // PCM
  fmt.writeUInt16LE(1, 10); // mono
  fmt.writeUInt32LE(8000, 12);
  fmt.writeUInt32LE(16000, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const dataLength = size - 12 - fmt.length - 8;
  const data = Buffer.alloc(8);
  data.write('data', 0, 'latin1');
  data.writeUInt32LE(dataLength, 4);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(size - 8, 4);
  riff.write('WAVE', 8, 'latin1');
  return Buffer.concat([riff, fmt, data, randomBytes(dataLength)]);
}

/** An MP4 that file-type recognises (an ftyp box of brand isom), `size` bytes long. */
export function mp4Bytes(size = 50_000): Buffer {
  const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2', 'latin1')]);
  return Buffer.concat([ftyp, randomBytes(size - ftyp.length)]);
}

/** A collection tenant with an app of its own on a loopback port, for tests that need real HTTP. */
export async function collectionTenantOverHttp(): Promise<{ t: CollectionTenant; app: FastifyInstance; base: string }> {
  const t = await createCollectionTenant();
  const app = await ctx.buildApp();
  return { t, app, base: await listenOnLoopback(app) };
}
