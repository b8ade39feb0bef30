import assert from 'node:assert/strict';
import { valueEventStrength } from '../../db/rules/value-events';
import { asTeammate, call, createTenant, errorCode, withKey } from '../support/fixtures';
import { liveFlow } from '../support/collection-setup';
import {
  IntegrationTenant, asOwner, createIntegrationTenant, ledgerOfProduct, outboxOf, postValueEvent, uniqueId, valueEvent,
} from '../support/integrations';
import { ctx } from '../support/root-hooks';

describe('integrations: value events, moments and ask candidates', () => {
  let tenant: IntegrationTenant;
  let flowId: string;
  before(async () => {
    tenant = await createIntegrationTenant();
    flowId = (await liveFlow(tenant)).flow.id;
  });

  it('stores 20 concurrent duplicates once: one row, one moment, one candidate', async () => {
    const body = valueEvent();
    const answers = await Promise.all(Array.from({ length: 20 }, () => postValueEvent(tenant, body)));
    const codes = answers.map((r) => r.statusCode);
    assert.equal(codes.filter((c) => c === 201).length, 1, answers.map((r) => r.body).join('\n'));
    assert.equal(codes.filter((c) => c === 200).length, 19);
    const ids = new Set(answers.map((r) => r.json().data.id));
    assert.equal(ids.size, 1);
    assert.equal(answers.filter((r) => r.json().data.replayed).length, 19);
    const [{ rows, moments, opps }] = await ctx.dataSource.query(
      `SELECT (SELECT count(*)::int FROM proof_value_events WHERE product_id = $1 AND event_id = $2) AS rows,
              (SELECT count(*)::int FROM proof_moments m JOIN proof_value_events v ON v.id = m.value_event_id WHERE v.event_id = $2 AND v.product_id = $1) AS moments,
              (SELECT count(*)::int FROM proof_opportunities o JOIN proof_value_events v ON v.id = o.value_event_id WHERE v.event_id = $2 AND v.product_id = $1) AS opps`,
      [tenant.product.id, body.eventId]);
    assert.deepEqual({ rows, moments, opps }, { rows: 1, moments: 1, opps: 1 });
  });

  it('answers a later post of an eventId with the stored event, whatever its body', async () => {
    const body = valueEvent();
    const first = await postValueEvent(tenant, body);
    assert.equal(first.statusCode, 201, first.body);
    const e = first.json().data;
    assert.equal(e.strength, 80);
    assert.match(e.id, /^ve_/);
    assert.match(e.momentId, /^mom_/);
    assert.match(e.opportunityId, /^opp_/);
    assert.deepEqual(e.origin.type, 'api');
    assert.equal(e.replayed, false);
    const again = await postValueEvent(tenant, { ...body, type: 'score', properties: { scale: 'nps', value: 2 } });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.type, 'milestone');
    assert.equal(again.json().data.replayed, true);
  });

  it('announces moments and candidates through the ledger, and finds the value event by its eventId', async () => {
    const body = valueEvent();
    const e = (await postValueEvent(tenant, body)).json().data;
    const moments = await ledgerOfProduct(tenant.product.id, 'proof.moment.detected');
    const moment = moments.find((m) => m.properties.valueEventId === e.id)!;
    assert.deepEqual(moment.properties, { momentId: e.momentId, valueEventId: e.id, type: 'milestone', strength: 80 });
    const outbox = await outboxOf(tenant.product.id, 'proof.opportunity.created');
    const sent = outbox.find((o) => (o.payload.properties as Record<string, unknown>).opportunityId === e.opportunityId)!;
    assert.ok(sent.id.startsWith('evt_pev_'));
    assert.match(String(sent.payload.fetchUrl), /^\/api\/v1\/proof\/events\?eventId=pev_/);
    assert.deepEqual(Object.keys(sent.payload.properties as object).sort(), ['momentId', 'opportunityId', 'strength']);
    assert.equal((await outboxOf(tenant.product.id, 'proof.value_event.recorded')).length, 0);
    const found = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/events?eventId=${body.eventId}` }));
    assert.equal(found.statusCode, 200);
    assert.equal(found.json().data.length, 1);
    assert.equal(found.json().data[0].eventType, 'proof.value_event.recorded');
  });

  it('scores strength from the base and the person\'s recent events, never from a score\'s value', async () => {
    assert.equal(valueEventStrength('score', 0, false), 60);
    assert.equal(valueEventStrength('shipped_feature', 0, true), 90);
    assert.equal(valueEventStrength('milestone', 5, false), 100);
    const personRef = uniqueId('cus');
    const low = await postValueEvent(tenant, valueEvent({ personRef, type: 'score', properties: { scale: 'nps', value: 0 } }));
    assert.equal(low.json().data.strength, 60);
    assert.equal(low.json().data.momentId, null);
    const next = await postValueEvent(tenant, valueEvent({ personRef, type: 'score', properties: { scale: 'nps', value: 0 } }));
    assert.equal(next.json().data.strength, 70);
    assert.match(next.json().data.momentId, /^mom_/);
    const old = await postValueEvent(tenant, valueEvent({
      personRef: uniqueId('cus'), type: 'resolved_ticket', properties: { ticketId: 'T-1' },
      occurredAt: new Date(Date.now() - 40 * 86_400_000).toISOString(),
    }));
    assert.equal(old.json().data.strength, 60);
  });

  it('suppresses a candidate while the person has an open one', async () => {
    const personRef = uniqueId('cus');
    const first = (await postValueEvent(tenant, valueEvent({ personRef }))).json().data;
    assert.ok(first.opportunityId);
    const second = (await postValueEvent(tenant, valueEvent({ personRef }))).json().data;
    assert.equal(second.opportunityId, null);
    assert.equal(second.suppressedReason, 'open_opportunity');
    assert.ok(second.momentId);
  });

  it('suppresses people who opted out through collection, and people sent a request within the cooldown', async () => {
    const request = async (recipient: object) => {
      const res = await asOwner(tenant, 'POST', '/api/proof/collect/requests', { flowId, channel: 'link', recipient });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data as { request: { id: string }; linkToken: string };
    };
    const optOut = async (linkToken: string) => {
      const res = await call({ method: 'POST', url: '/api/proof/collect/opt-out', headers: { 'x-link-token': linkToken } });
      assert.equal(res.statusCode, 200, res.body);
    };
    const reason = async (person: object) => {
      const res = await postValueEvent(tenant, valueEvent({ personRef: undefined, ...person }));
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.suppressedReason as string | null;
    };

    const optedOut = uniqueId('cus');
    await optOut((await request({ personRef: optedOut })).linkToken);
    assert.equal(await reason({ personRef: optedOut }), 'opted_out');
    const optedOutUser = uniqueId('user');
    await optOut((await request({ endUserId: optedOutUser })).linkToken);
    assert.equal(await reason({ endUserId: optedOutUser }), 'opted_out');

    const drafted = uniqueId('cus');
    await request({ personRef: drafted });
    assert.equal(await reason({ personRef: drafted }), null, 'a draft nobody sent does not count');

    const asked = uniqueId('cus');
    const sent = await request({ personRef: asked });
    const sendRes = await asOwner(tenant, 'POST', `/api/proof/collect/requests/${sent.request.id}`, { action: 'send' });
    assert.equal(sendRes.statusCode, 200, sendRes.body);
    assert.equal(await reason({ personRef: asked }), 'cooldown');
    await ctx.dataSource.query(`UPDATE proof_requests SET sent_at = now() - interval '100 days' WHERE id = $1`, [sent.request.id]);
    assert.equal(await reason({ personRef: asked }), null, 'a request sent before the cooldown no longer suppresses');
  });

  it('refuses bad bodies with 400 at the right path', async () => {
    const cases: Array<[object, string]> = [
      [valueEvent({ personRef: undefined }), 'personRef'],
      [valueEvent({ eventId: 'short' }), 'eventId'],
      [valueEvent({ occurredAt: '2026-01-01T10:00:00' }), 'occurredAt'],
      [valueEvent({ occurredAt: new Date(Date.now() + 10 * 60_000).toISOString() }), 'occurredAt'],
      [valueEvent({ type: 'score', properties: { scale: 'nps', value: 11 } }), 'properties.value'],
      [valueEvent({ type: 'purchase', properties: { amount: 100, currency: 'EURO' } }), 'properties.currency'],
      [valueEvent({ type: 'plan_upgrade', properties: { fromPlan: 'a' } }), 'properties.toPlan'],
      [valueEvent({ type: 'shipped_feature', properties: { featureId: 'fea_unknown000000' } }), 'properties.featureId'],
      [valueEvent({ properties: { name: 'x', nested: { a: 1 } } }), 'properties.nested'],
      [valueEvent({ extra: true }), 'extra'],
      [valueEvent({ properties: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }), 'properties'],
    ];
    for (const [body, path] of cases) {
      const res = await postValueEvent(tenant, body);
      assert.equal(res.statusCode, 400, `${path}: ${res.body}`);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
      assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), `${path}: ${res.body}`);
    }
  });

  it('raises a shipped feature the end user voted for by 20', async () => {
    const feature = await asOwner(tenant, 'POST', '/api/workspace/features',
      { productId: tenant.product.id, title: 'Bulk export', problem: 'Exports are slow' });
    assert.equal(feature.statusCode, 201, feature.body);
    const featureId = feature.json().data.id;
    await ctx.dataSource.query(`INSERT INTO feature_votes (feature_id, product_id, end_user_id) VALUES ($1, $2, 'voter-1')`, [featureId, tenant.product.id]);
    const res = await postValueEvent(tenant, valueEvent({ personRef: undefined, endUserId: 'voter-1', type: 'shipped_feature', properties: { featureId } }));
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.strength, 90);
  });

  it('reads candidates; a person accepts or dismisses each once at the outcome route, a key cannot', async () => {
    const decide = (body: object, who = tenant.owner) => call(asTeammate(who, { method: 'POST', url: '/api/proof/collect/requests/outcome', payload: body }));
    const e = (await postValueEvent(tenant, valueEvent())).json().data;
    const one = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/opportunities/${e.opportunityId}` }));
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().data.state, 'proposed');
    assert.equal(one.json().data.trigger, 'milestone');
    const listed = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/opportunities?state=proposed&personRef=${e.personRef}` }));
    assert.deepEqual(listed.json().data.map((o: { id: string }) => o.id), [e.opportunityId]);
    const byKey = await call(withKey(tenant.key, { method: 'POST', url: '/api/proof/collect/requests/outcome',
      payload: { candidateId: e.opportunityId, action: 'dismiss' } }));
    assert.equal(byKey.statusCode, 403);
    assert.equal(byKey.json().code, 'HUMAN_APPROVAL_REQUIRED');
    const accepted = await decide({ candidateId: e.opportunityId, action: 'accept', flowId, channel: 'link' });
    assert.equal(accepted.statusCode, 201, accepted.body);
    assert.equal(accepted.json().data.candidate.state, 'accepted');
    assert.equal(accepted.json().data.request.status, 'draft', 'nothing is sent: a person sends it');
    const read = (await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/opportunities/${e.opportunityId}` }))).json().data;
    assert.equal(read.state, 'accepted');
    assert.equal(read.requestId, accepted.json().data.request.id);
    assert.ok(read.decidedAt);
    assert.equal((await decide({ candidateId: e.opportunityId, action: 'dismiss' })).json().code, 'CONFLICT');
    // The person's next moment may open a candidate again: the draft was not sent.
    const next = (await postValueEvent(tenant, valueEvent({ personRef: e.personRef }))).json().data;
    assert.ok(next.opportunityId);
    const dismissed = await decide({ candidateId: next.opportunityId, action: 'dismiss' });
    assert.equal(dismissed.statusCode, 200, dismissed.body);
    assert.equal(dismissed.json().data.candidate.state, 'dismissed');
  });

  it('reads an expired candidate as expired', async () => {
    const e = (await postValueEvent(tenant, valueEvent())).json().data;
    await ctx.dataSource.query(`UPDATE proof_opportunities SET expires_at = now() - interval '1 second' WHERE id = $1`, [e.opportunityId]);
    const one = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/opportunities/${e.opportunityId}` }));
    assert.equal(one.json().data.state, 'expired');
    const late = await call(asTeammate(tenant.owner, {
      method: 'POST', url: '/api/proof/collect/requests/outcome', payload: { candidateId: e.opportunityId, action: 'accept', flowId, channel: 'link' },
    }));
    assert.equal(late.statusCode, 409, 'an expired candidate cannot be accepted');
    const expired = await call(asTeammate(tenant.owner, { method: 'GET', url: '/api/proof/collect/requests/outcome?state=expired' }));
    assert.ok(expired.json().data.some((o: { id: string }) => o.id === e.opportunityId));
    const next = (await postValueEvent(tenant, valueEvent({ personRef: e.personRef }))).json().data;
    assert.ok(next.opportunityId, 'an expired candidate does not suppress');
  });

  it('keeps tenants apart: the same eventId is another product\'s own, ids of others are 404', async () => {
    const other = await createTenant(['service:proof:read', 'service:proof:write']);
    const body = valueEvent();
    const mine = (await postValueEvent(tenant, body)).json().data;
    const theirs = await postValueEvent(other, body);
    assert.equal(theirs.statusCode, 201);
    assert.notEqual(theirs.json().data.id, mine.id);
    const read = await call(withKey(other.key, { method: 'GET', url: `/api/v1/proof/opportunities/${mine.opportunityId}` }));
    assert.equal(read.statusCode, 404);
    const foreign = await call(asTeammate(other.owner, { method: 'POST', url: '/api/proof/collect/requests/outcome',
      payload: { candidateId: mine.opportunityId, action: 'dismiss' } }));
    assert.equal(foreign.statusCode, 404);
    const theirList = await call(asTeammate(other.owner, { method: 'GET', url: '/api/proof/collect/requests/outcome' }));
    assert.ok(!theirList.json().data.some((o: { id: string }) => o.id === mine.opportunityId));
    const readOnly = await call(withKey(tenant.readKey, { method: 'POST', url: '/api/v1/proof/events', payload: valueEvent() }));
    assert.equal(errorCode(readOnly), 'INSUFFICIENT_SCOPE');
  });
});
