import { DataSource, EntityManager } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { CollectionQuestion, CollectionQuestionVersion } from '../entities';
import { QuestionChange, QuestionText, mergeQuestionChange } from '../rules/collection-question';
import { newId } from '../rules/ids';
import { PageRequest } from '../pagination';
import { Teammate, pageRows } from './scope';
import { dbNow } from '../clock';

export function viewQuestionVersion(v: CollectionQuestionVersion) {
  return {
    id: v.id,
    questionId: v.questionId,
    version: v.version,
    text: v.text,
    kind: v.kind,
    helpText: v.helpText,
    options: v.options,
    createdAt: v.createdAt.toISOString(),
  };
}

/** How many flows use a question: in their draft or live definition, and how many of those are live. */
async function usageOf(em: EntityManager, organizationId: string, ids: string[]) {
  if (ids.length === 0) return new Map<string, { flows: number; liveFlows: number }>();
  const rows: Array<{ question_id: string; flows: number; live_flows: number }> = await em.query(
    `SELECT q.id AS question_id,
            count(DISTINCT f.id)::int AS flows,
            count(DISTINCT f.id) FILTER (WHERE f.state = 'live' AND v.definition -> 'questions' @> jsonb_build_array(jsonb_build_object('questionId', q.id)))::int AS live_flows
       FROM unnest($2::text[]) AS q(id)
       JOIN collection_flows f ON f.organization_id = $1
       LEFT JOIN collection_flow_versions v ON v.id = f.live_version_id
      WHERE f.draft_definition -> 'questions' @> jsonb_build_array(jsonb_build_object('questionId', q.id))
         OR v.definition -> 'questions' @> jsonb_build_array(jsonb_build_object('questionId', q.id))
      GROUP BY q.id`,
    [organizationId, ids],
  );
  return new Map(rows.map((r) => [r.question_id, { flows: r.flows, liveFlows: r.live_flows }]));
}

async function views(em: EntityManager, organizationId: string, questions: CollectionQuestion[]) {
  const usage = await usageOf(em, organizationId, questions.map((q) => q.id));
  const latest = questions.length === 0 ? [] : await em.query(
    `SELECT v.id FROM collection_question_versions v JOIN collection_questions q ON q.id = v.question_id AND v.version = q.latest_version
      WHERE q.id = ANY($1)`,
    [questions.map((q) => q.id)],
  );
  const versions = await em.getRepository(CollectionQuestionVersion).findByIds(latest.map((r: { id: string }) => r.id));
  const byQuestion = new Map(versions.map((v) => [v.questionId, v]));
  return questions.map((q) => ({
    id: q.id,
    state: q.state,
    latestVersion: viewQuestionVersion(byQuestion.get(q.id)!),
    usage: usage.get(q.id) ?? { flows: 0, liveFlows: 0 },
    createdAt: q.createdAt.toISOString(),
    updatedAt: q.updatedAt.toISOString(),
  }));
}

async function findQuestion(em: EntityManager, organizationId: string, id: string, lock = false) {
  const q = await em.getRepository(CollectionQuestion).findOne({
    where: { id, organizationId }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!q) throw notFound('question');
  return q;
}

export async function listQuestions(ds: DataSource, organizationId: string, query: PageRequest & { state?: string }) {
  const page = await pageRows(ds, CollectionQuestion, organizationId, { state: query.state }, query);
  return { data: await views(ds.manager, organizationId, page.data), nextCursor: page.nextCursor };
}

export async function getQuestion(ds: DataSource, organizationId: string, id: string) {
  const q = await findQuestion(ds.manager, organizationId, id);
  const [view] = await views(ds.manager, organizationId, [q]);
  const versions = await ds.getRepository(CollectionQuestionVersion).find({ where: { questionId: id }, order: { version: 'ASC' } });
  return { ...view, versions: versions.map(viewQuestionVersion) };
}

async function insertVersion(em: EntityManager, questionId: string, version: number, body: QuestionText, teammateId: string) {
  const row = {
    id: newId('qsv'), questionId, version, text: body.text, kind: body.kind,
    helpText: body.helpText ?? null, options: body.options ?? null, createdBy: teammateId,
  };
  await em.getRepository(CollectionQuestionVersion).insert(row);
  return em.getRepository(CollectionQuestionVersion).findOneByOrFail({ id: row.id });
}

export async function createQuestion(ds: DataSource, who: Teammate, body: QuestionText) {
  return ds.transaction(async (em) => {
    const id = newId('qst');
    await em.getRepository(CollectionQuestion).insert({
      id, organizationId: who.organizationId, state: 'active', latestVersion: 1, updatedAt: dbNow,
    });
    return viewQuestionVersion(await insertVersion(em, id, 1, body, who.teammateId));
  });
}

/** An edit never changes a version: it writes version N+1, and flows pinned to older ones keep them. */
export async function reviseQuestion(ds: DataSource, who: Teammate, id: string, change: QuestionChange) {
  return ds.transaction(async (em) => {
    const q = await findQuestion(em, who.organizationId, id, true);
    if (q.state === 'archived') throw conflict('the question is archived; restore it first');
    const latest = await em.getRepository(CollectionQuestionVersion).findOneByOrFail({ questionId: id, version: q.latestVersion });
    const body = mergeQuestionChange({
      text: latest.text, kind: latest.kind, helpText: latest.helpText ?? undefined, options: latest.options ?? undefined,
    }, change);
    const version = q.latestVersion + 1;
    await em.getRepository(CollectionQuestion).update({ id }, { latestVersion: version, updatedAt: dbNow });
    return viewQuestionVersion(await insertVersion(em, id, version, body, who.teammateId));
  });
}

export async function setQuestionState(ds: DataSource, organizationId: string, id: string, state: 'active' | 'archived') {
  await ds.transaction(async (em) => {
    await findQuestion(em, organizationId, id, true);
    await em.getRepository(CollectionQuestion).update({ id }, { state, updatedAt: dbNow });
  });
  return getQuestion(ds, organizationId, id);
}

/** A flow question pinned to one version (the latest by default), ready to put in a definition. */
export async function pinQuestion(ds: DataSource, organizationId: string, id: string, version?: number) {
  const q = await findQuestion(ds.manager, organizationId, id);
  if (q.state === 'archived') throw conflict('an archived question cannot be pinned; restore it first');
  const v = await ds.getRepository(CollectionQuestionVersion).findOneBy({ questionId: id, version: version ?? q.latestVersion });
  if (!v) throw notFound('question version');
  return { flowQuestion: { questionId: id, version: v.version, required: false, text: v.text, kind: v.kind, helpText: v.helpText, options: v.options } };
}

/** The versions a definition pins, keyed `questionId@version`; missing ones are simply absent. */
export async function pinnedVersions(em: EntityManager, organizationId: string, refs: Array<{ questionId: string; version: number }>) {
  if (refs.length === 0) return new Map<string, CollectionQuestionVersion>();
  const rows: Array<{ id: string }> = await em.query(
    `SELECT v.id FROM collection_question_versions v JOIN collection_questions q ON q.id = v.question_id
      WHERE q.organization_id = $1 AND (v.question_id, v.version) IN (SELECT * FROM unnest($2::text[], $3::int[]))`,
    [organizationId, refs.map((r) => r.questionId), refs.map((r) => r.version)],
  );
  const versions = await em.getRepository(CollectionQuestionVersion).findByIds(rows.map((r) => r.id));
  return new Map(versions.map((v) => [`${v.questionId}@${v.version}`, v]));
}
