import { Readable } from 'node:stream';
import { FastifyInstance } from 'fastify';
import { approvedExportDocument } from '../../db/proof/proof-exports';
import { productTenant } from '../plugins/product-tenant';
import type { AppDeps } from '../app-deps';
import { dataOf } from '../plugins/responses';
import { exportSchema } from './schemas';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

/**
 * The `{data: …}` envelope around the export document, written as the document is read. Nothing is written
 * before the document's first chunk, so a first read that fails still answers an error envelope.
 */
async function* inEnvelope(document: AsyncIterable<string>): AsyncGenerator<string> {
  let opening = '{"data":';
  for await (const chunk of document) {
    yield opening + chunk;
    opening = '';
  }
  yield '}';
}

export async function proofExportRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.post('/api/v1/proof/exports', {
    schema: { response: { 201: dataOf(exportSchema) } },
    config: {
      tag: 'proof', ...PROOF_API_ROUTE,
      operationId: 'exportProof',
      auth: 'key', scope: 'service:proof:export', idempotency: 'optional',
      summary: 'Approved-only JSON bundle with a sha256 digest over its canonical bytes, streamed (the digest comes last)',
    },
  }, async (request, reply) => {
    // Streamed a page of items at a time: the API never holds the bundle (docs/proof.md, Exports).
    const body = Readable.from(inEnvelope(approvedExportDocument(deps.dataSource, productTenant(request).productId)), { objectMode: false });
    return reply.code(201).type('application/json; charset=utf-8').send(body);
  });
}
