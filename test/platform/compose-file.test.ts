import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../support/role-processes';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
  networks?: string[] | Record<string, { ipv4_address?: string }>;
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/**
 * No Docker engine runs here: docker-compose.yml is held to the shape the process test
 * (scale-out.test.ts) and the production build test run, and to the variables the code reads.
 */
describe('docker-compose.yml, Caddyfile, .env.example and the Dockerfile stay in step with the process tests', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
  const services = compose.services;
  const config = read('runtime/config.ts');

  it('the roles run the built files with node, as the production build test does', () => {
    assert.deepEqual(services.api.command, ['node', 'dist/api/server.js']);
    assert.deepEqual(services.worker.command, ['node', 'dist/worker/main.js']);
    assert.deepEqual(services['temporal-setup'].command, ['node', 'dist/bin/sv.js', 'temporal', 'search-attributes']);
    const dockerfile = read('Dockerfile');
    assert.match(dockerfile, /FROM node:\S+ AS build[\s\S]*RUN npm run build[\s\S]*\nFROM node:\S+\n[\s\S]*USER node\n[\s\S]*CMD \["node", "dist\/api\/server\.js"\]/);
    assert.doesNotMatch(dockerfile.slice(dockerfile.lastIndexOf('FROM ')), /tsx/);
  });

  it('every role shares SV_SECRET_KEYS (required) and the external PostgreSQL and Temporal; none publishes Temporal or the API', () => {
    for (const name of ['api', 'worker']) {
      const env = services[name].environment!;
      assert.match(env.SV_SECRET_KEYS, /^\$\{SV_SECRET_KEYS:\?/, `${name} refuses to start without it`);
      assert.match(env.DATABASE_URL, /@postgres:5432\//);
      assert.match(env.TEMPORAL_ADDRESS, /temporal:7233/);
      assert.equal(services[name].restart, 'unless-stopped');
      assert.ok(services[name].healthcheck, `${name} has a health check`);
      assert.equal(services[name].ports, undefined, `${name} publishes no port (Caddy is the way in; --scale works)`);
    }
    assert.equal(services.temporal.ports, undefined, 'the Temporal frontend is not published');
    assert.deepEqual(services['temporal-ui'].ports, ['127.0.0.1:8233:8080']);
    assert.match(services.api.healthcheck!.test.join(' '), /\/readyz/);
    assert.match(services.worker.healthcheck!.test.join(' '), /9464\/healthz/);
    assert.equal(services.worker.environment!.SV_WORKER_METRICS_PORT, '9464');
    assert.equal(services.api.depends_on!['temporal-setup'].condition, 'service_completed_successfully');
  });

  it('SV_TRUST_PROXY names Caddy, which proxies to the api replicas and keeps /metrics off the public side', () => {
    const caddyAddress = (services.caddy.networks as Record<string, { ipv4_address?: string }>).front.ipv4_address;
    assert.equal(services.api.environment!.SV_TRUST_PROXY, caddyAddress);
    const caddyfile = read('Caddyfile');
    assert.match(caddyfile, /dynamic a \{\s*name api\s*port 3000/);
    assert.match(caddyfile, /lb_try_duration/);
    assert.match(caddyfile, /respond \/metrics 404/);
  });

  it('every variable the compose file and .env.example set is one the code reads', () => {
    const names = new Set<string>();
    for (const service of [services.api, services.worker]) for (const name of Object.keys(service.environment!)) names.add(name);
    for (const line of read('.env.example').split('\n')) {
      const match = /^([A-Z][A-Z0-9_]*)=/.exec(line);
      if (match) names.add(match[1]);
    }
    const composeOnly = ['POSTGRES_PASSWORD', 'SV_PUBLIC_ADDRESS', 'LOG_LEVEL'];
    const unknown = [...names].filter((name) => !composeOnly.includes(name) && !config.includes(`'${name}'`));
    assert.deepEqual(unknown, []);
  });
});
