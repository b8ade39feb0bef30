import { DraftFields } from '../../db/collection/drafts';
import { liveFlow } from '../../db/collection/pinned-flow';
import { claimSubmissionKey, storeSubmission } from '../../db/collection/submit';
import { checkDailyCeiling } from '../../db/proof/proof-submissions';
import { CollectionDraft } from '../../db/entities';
import { newId } from '../../db/rules/ids';
import { ServiceError, conflict } from '../../runtime/service-error';
import { CEILING_OR_RATE, errorOf, fileOf } from '../plugins/responses';
import type { AppDeps } from '../app-deps';
import type { RouteApp } from '../plugins/validation';
import { countPublic } from './customer-auth';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';
import { STATE_CONFLICT } from './collection-schemas';

type Form = Record<string, string | string[]>;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`
    + `<title>${escape(title)}</title></head><body><main>${body}</main></body></html>`;
}

/** The error page of the form: the same status and code as the JSON answer, as plain HTML. */
export function nojsErrorPage(error: { error: string; code: string }): string {
  return page('Your story was not sent', `<h1>Your story was not sent</h1><p data-code="${escape(error.code)}">${escape(error.error)}</p>`
    + '<p>Go back, check the form and send it again.</p>');
}

const bad = (message: string) => new ServiceError('INVALID_INPUT', message);
const one = (form: Form, name: string): string | undefined => {
  const v = form[name];
  if (Array.isArray(v)) throw bad(`${name} may be sent once`);
  return v;
};
const many = (form: Form, name: string): string[] | undefined => {
  const v = form[name];
  return v === undefined ? undefined : Array.isArray(v) ? v : [v];
};

const MAX_FIELDS = 200;

function parseForm(text: string): Form {
  const form: Form = {};
  const params = new URLSearchParams(text);
  let n = 0;
  for (const [key, value] of params) {
    if (++n > MAX_FIELDS) throw bad(`at most ${MAX_FIELDS} fields`);
    if (key.includes('\u0000') || value.includes('\u0000')) throw bad('fields must not contain NUL');
    const prior = form[key];
    form[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return form;
}

/**
 * The no-JavaScript form: a urlencoded post that creates what a submit creates, answered by a plain
 * HTML receipt (no script, CSP default-src 'none') showing the control link once.
 */
export async function collectNojsRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  // Customer routes answer 415 for any body type they do not take (Fastify would read text/plain).
  app.removeContentTypeParser('text/plain');
  const cfg = deps.config;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseForm(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  app.post<{ Body: Form }>('/api/proof/collect/nojs', {
    schema: {
      response: {
        409: STATE_CONFLICT,
        429: errorOf(CEILING_OR_RATE), 200: fileOf('text/html', 'the HTML receipt'),
      },
    },
    onRequest: async (request, reply) => countPublic(cfg, request, reply),
    config: {
      tag: 'collection', ...CUSTOMER_ROUTE,
      operationId: 'submitNojsForm', summary: 'No-JavaScript form (application/x-www-form-urlencoded); answers a plain HTML receipt',
      htmlError: nojsErrorPage,
    },
  }, async (request, reply) => {
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') || typeof request.body !== 'object') {
      throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'send the form as application/x-www-form-urlencoded');
    }
    const form = request.body;
    if (one(form, 'website')) throw bad('the form could not be accepted');
    const text = one(form, 'text') ?? '';
    if (text.trim().length < 3 || text.length > 10_000) throw bad('your story needs 3 to 10000 characters');
    if (one(form, 'consent') !== 'yes') throw bad('please agree to the consent wording');
    const key = one(form, 'submissionKey') ?? '';
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(key)) throw bad('submissionKey must be 16 to 64 letters, digits, _ or -');
    const fields = readFields(form);
    const stored = await ds.transaction(async (em) => {
      const flow = await liveFlow(em, one(form, 'flow') ?? '');
      if (one(form, 'flowVersion') !== flow.flowVersionId) throw conflict('the form changed since this page was loaded; reload it');
      if (!(await claimSubmissionKey(em, flow.flowId, key))) throw conflict('this form was already sent');
      const terms = flow.consent?.terms;
      const outside = [
        ...(fields.publication?.channels ?? []).filter((c) => terms && !terms.channels.includes(c)),
        ...(fields.identityFields ?? []).filter((f) => terms && !terms.identityFields.includes(f)),
        ...(fields.displayMode && terms && !terms.displayModes.includes(fields.displayMode) ? [fields.displayMode] : []),
      ];
      if (outside.length) throw bad(`these choices go beyond the consent terms: ${outside.join(', ')}`);
      for (const q of flow.questions) {
        const answer = fields.answers?.[q.questionId];
        if (q.required && answer === undefined) throw bad(`please answer: ${q.text}`);
        if (q.kind === 'choice' && typeof answer === 'string' && !(q.options ?? []).includes(answer)) throw bad(`choose one of the options for: ${q.text}`);
        if (q.kind === 'yes_no' && answer !== undefined) fields.answers![q.questionId] = answer === 'yes' || answer === 'true';
      }
      await checkDailyCeiling(em, flow.organizationId, cfg.dailySubmissionCeiling);
      const id = newId('drf');
      const now = new Date();
      await em.getRepository(CollectionDraft).insert({
        id, organizationId: flow.organizationId, productId: flow.productId, flowId: flow.flowId, flowVersionId: flow.flowVersionId,
        requestId: null, personRef: null, endUserId: null, source: 'nojs', verified: false, status: 'open', revision: 1,
        fields: { ...fields, submissionKey: key }, proofItemId: null, submittedAt: null,
        expiresAt: new Date(now.getTime() + cfg.draftTtlDays * 86_400_000), updatedAt: now,
      });
      const draft = await em.getRepository(CollectionDraft).findOneByOrFail({ id });
      const submission = await storeSubmission(ds, em, draft, flow, fields, [], {
        pageUrl: cfg.collectPageUrl, controlTtlDays: cfg.controlLinkTtlDays, monthlyAllowance: cfg.proofMonthlySubmissionAllowance,
        dailyCeiling: cfg.dailySubmissionCeiling, ip: request.ip,
      });
      return { submission, flow };
    });
    const { submission, flow } = stored;
    const html = page('Thank you: your story was received', `<h1>Thank you</h1>`
      + `<p>${escape(flow.thankYou || 'Your story was received.')}</p>`
      + `<h2>Your story</h2><blockquote>${escape(text)}</blockquote>`
      + `<h2>What you agreed to</h2><p>Consent version <code>${escape(flow.consent?.consentTemplateVersionId ?? 'none')}</code>, `
      + `wording hash <code>${escape(flow.consent?.wordingHash ?? 'none')}</code></p>`
      + `<dl><dt>Submission</dt><dd data-field="submissionId">${escape(submission.submissionId)}</dd>`
      + `<dt>Story</dt><dd data-field="proofItemId">${escape(submission.proofItemId)}</dd>`
      + `<dt>Receipt</dt><dd data-field="receiptId">${escape(submission.receiptId)}</dd></dl>`
      + `<h2>Your private control link</h2><p>Keep it: it is shown only once. With it you can see where your story is used, pause it or withdraw it.</p>`
      + `<p><a data-field="controlUrl" href="${escape(submission.controlUrl)}">${escape(submission.controlUrl)}</a></p>`);
    return reply.code(200).type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'")
      .header('x-content-type-options', 'nosniff')
      .send(html);
  });
}

const IDENTITY_FIELD_VALUES = ['name', 'company', 'title', 'photo', 'logo', 'location'];
const DISPLAY_MODE_VALUES = ['full_name', 'first_name', 'initials', 'anonymous'];

function readFields(form: Form): DraftFields {
  const fields: DraftFields = { text: one(form, 'text'), consentAccepted: true };
  const title = one(form, 'title');
  if (title) {
    if (title.length > 180) throw bad('the title is at most 180 characters');
    fields.title = title;
  }
  const rating = one(form, 'rating');
  if (rating) {
    if (!/^\d{1,2}$/.test(rating)) throw bad('rating must be a number');
    fields.rating = Number(rating);
  }
  const identity: NonNullable<DraftFields['identity']> = {};
  for (const [field, name] of [['name', 'name'], ['email', 'email'], ['company', 'company'], ['title', 'jobTitle'], ['location', 'location']] as const) {
    const v = one(form, name);
    if (v) {
      if (v.length > (field === 'email' ? 320 : 120)) throw bad(`${name} is too long`);
      if (!/\S/.test(v)) throw bad(`${name} must not be only spaces`);
      identity[field] = v;
    }
  }
  if (Object.keys(identity).length) fields.identity = identity;
  const displayMode = one(form, 'displayMode');
  if (displayMode) {
    if (!DISPLAY_MODE_VALUES.includes(displayMode)) throw bad('displayMode is not one of the choices');
    fields.displayMode = displayMode;
  }
  const identityFields = many(form, 'identityFields');
  if (identityFields) {
    if (identityFields.some((f) => !IDENTITY_FIELD_VALUES.includes(f))) throw bad('identityFields has an unknown choice');
    fields.identityFields = [...new Set(identityFields)];
  }
  const channels = many(form, 'channels');
  if (channels) fields.publication = { channels: [...new Set(channels)] };
  const answers: Record<string, string | boolean> = {};
  for (const [name, value] of Object.entries(form)) {
    if (!name.startsWith('q.')) continue;
    if (Array.isArray(value)) throw bad(`${name} may be sent once`);
    if (value.length > 10_000) throw bad(`${name} is too long`);
    if (value !== '') answers[name.slice(2)] = value;
  }
  if (Object.keys(answers).length) fields.answers = answers;
  return fields;
}
