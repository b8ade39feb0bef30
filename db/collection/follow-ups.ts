import { DataSource } from 'typeorm';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { ProofCorrection, ProofRouting } from '../entities';
import { RoutingState } from '../entities/proof-routing';
import { PageRequest } from '../pagination';
import { pageRows } from './scope';
import { dbNow } from '../clock';

const ROUTING_ORDER: RoutingState[] = ['new', 'in_progress', 'done'];

export function viewRouting(r: ProofRouting) {
  return {
    id: r.id,
    productId: r.productId,
    proofItemId: r.proofItemId,
    flowId: r.flowId,
    flowVersionId: r.flowVersionId,
    requestId: r.requestId,
    scale: r.scale,
    score: r.score,
    band: r.band,
    followUp: r.followUp,
    state: r.state,
    roomId: r.roomId,
    note: r.note,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

export async function listRouting(ds: DataSource, organizationId: string, query: PageRequest & { band?: string; state?: string }) {
  const page = await pageRows(ds, ProofRouting, organizationId, { band: query.band, state: query.state }, query);
  return { data: page.data.map(viewRouting), nextCursor: page.nextCursor };
}

/** Moves a follow-up forward (never back), links the room opened for it, or notes it. */
export async function updateRouting(
  ds: DataSource, organizationId: string, id: string, patch: { state?: RoutingState; roomId?: string; note?: string },
) {
  return ds.transaction(async (em) => {
    const r = await em.getRepository(ProofRouting).findOne({ where: { id, organizationId }, lock: { mode: 'pessimistic_write' } });
    if (!r) throw notFound('routing record');
    if (patch.state && ROUTING_ORDER.indexOf(patch.state) < ROUTING_ORDER.indexOf(r.state)) {
      throw conflict(`a follow-up only moves forward; it is ${r.state}`);
    }
    if (Object.keys(patch).length === 0) throw validationFailed([{ path: '', message: 'name state, roomId or note' }]);
    await em.getRepository(ProofRouting).update({ id }, {
      ...(patch.state ? { state: patch.state } : {}),
      ...(patch.roomId !== undefined ? { roomId: patch.roomId } : {}),
      ...(patch.note !== undefined ? { note: patch.note } : {}),
      updatedAt: dbNow,
    });
    return viewRouting(await em.getRepository(ProofRouting).findOneByOrFail({ id }));
  });
}

export function viewCorrection(c: ProofCorrection) {
  return {
    id: c.id,
    productId: c.productId,
    proofItemId: c.proofItemId,
    versionId: c.versionId,
    message: c.message,
    status: c.status,
    note: c.note,
    closedAt: c.closedAt?.toISOString() ?? null,
    createdAt: c.createdAt.toISOString(),
  };
}

export async function listCorrections(ds: DataSource, organizationId: string, query: PageRequest & { status?: string }) {
  const page = await pageRows(ds, ProofCorrection, organizationId, { status: query.status }, query);
  return { data: page.data.map(viewCorrection), nextCursor: page.nextCursor };
}

/** Closes a correction with the note the customer then reads on the control link; closed is final. */
export async function closeCorrection(ds: DataSource, who: { organizationId: string; teammateId: string }, id: string, note: string) {
  return ds.transaction(async (em) => {
    const c = await em.getRepository(ProofCorrection).findOne({ where: { id, organizationId: who.organizationId }, lock: { mode: 'pessimistic_write' } });
    if (!c) throw notFound('correction');
    if (c.status === 'closed') throw conflict('the correction is already closed');
    await em.getRepository(ProofCorrection).update({ id }, { status: 'closed', note, closedBy: who.teammateId, closedAt: dbNow });
    return viewCorrection(await em.getRepository(ProofCorrection).findOneByOrFail({ id }));
  });
}
