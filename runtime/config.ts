import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { StartupError } from './startup-error';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** SV_DATA_DIR was set: the embedded PostgreSQL's data stays there or the start fails. */
  dataDirFromEnv: boolean;
  embeddedPgPort: number;
  temporalDevPort: number;
  temporalDevUiPort: number;
  temporalCli: string | undefined;
  databaseUrl: string | undefined;
  temporalAddress: string | undefined;
  temporalNamespace: string;
  /** Temporal Cloud or a TLS frontend (runtime/temporal-connection.ts): mTLS certificate and key, PEM text or a file path each. */
  temporalTlsCert: string | undefined;
  temporalTlsKey: string | undefined;
  /** A CA for a frontend whose certificate the system does not trust, and the name to check it against. */
  temporalTlsCa: string | undefined;
  temporalTlsServerName: string | undefined;
  /** Temporal Cloud API key (TLS is then on). */
  temporalApiKey: string | undefined;
  taskQueue: string;
  environment: string;
  rateLimitPerMinute: number;
  /** Requests per client address per minute on /api/public/*. */
  publicRateLimitPerMinute: number;
  /**
   * Fastify's trustProxy: which proxies' X-Forwarded-For names the client (request.ip, used by the
   * public rate limit and recorded in consent evidence). false: the connecting address is the client.
   */
  trustProxy: boolean | number | string[];
  sessionTtlHours: number;
  /** Where the console answers; sign-in links are `<url>/sign-in#sl_…` (PAGES.md §5). */
  consoleUrl: string;
  /** Console sign-in requests per e-mail address per minute, and per client address per minute. */
  signInPerEmailPerMinute: number;
  signInPerAddressPerMinute: number;
  identityTokenMaxTtlSeconds: number;
  maintenanceIntervalMs: number;
  webhookTimeoutMs: number;
  webhookRetryInitialMs: number;
  webhookRetryMaxMs: number;
  webhookAllowPrivateTargets: boolean;
  webhookBatchConcurrency: number;
  webhookRelayIdleMs: number;
  webhookBatchSize: number;
  relayBatchSize: number;
  relayIdleMs: number;
  aiBaseUrl: string | undefined;
  aiApiKey: string | undefined;
  aiModel: string | undefined;
  proofMonthlySubmissionAllowance: number;
  proofApprovalReminderMs: number;
  proofRevocationSlaMs: number;
  proofDeletionRecoveryMs: number;
  signalMonthlyAllowance: number;
  signalDailyCeiling: number;
  signalRelayBatch: number;
  signalRelayIdleMs: number;
  aiMaxAttempts: number;
  aiRetryInitialMs: number;
  aiTimeoutMs: number;
  aiWaitMs: number;
  aiEvaluatedModels: string[];
  aiMonthlyAllowance: number;
  inboxHeartbeatMs: number;
  /** Open inbox streams one end user may hold at once, across every API process; the next one is 429. */
  inboxStreamsPerEndUser: number;
  /** Open inbox streams one API process holds at most, whoever holds them; the next one is 503. */
  inboxStreamsPerProcess: number;
  /** Where this service answers (`http://HOST:PORT`, a wildcard host as 127.0.0.1): the base of the links it hands out by default. */
  publicBaseUrl: string;
  collectPageUrl: string;
  draftTtlDays: number;
  uploadTtlMs: number;
  /** Quotas on anonymous upload storage (bytes opened): per draft, per flow per UTC day, per client address per UTC day. */
  uploadQuotas: { draftBytes: number; flowDailyBytes: number; addressDailyBytes: number };
  /** An open draft's uploads and media are erased this long after the draft and the upload last changed. */
  unsubmittedMediaTtlMs: number;
  assembleWaitMs: number;
  /** How long an API process keeps the customer routes' allowed CORS origins: the bound on a change taking effect. */
  customerOriginsCacheMs: number;
  controlLinkTtlDays: number;
  /** Person-link e-mails one person may be sent per minute, however many of their links ask (docs/collection.md#story-links-and-person-links). */
  personLinkPerMinute: number;
  dailySubmissionCeiling: number;
  transcribeBaseUrl: string | undefined;
  transcribeApiKey: string | undefined;
  transcribeModel: string | undefined;
  /** Set together, or not at all: the media store is then this S3-compatible bucket instead of a folder. */
  mediaS3: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string } | null;
  collectCnameTarget: string;
  /** DNS servers (`host` or `host:port`) that check custom domains; empty: the system's resolvers. */
  domainDnsServers: string[];
  domainCheckIntervalMs: number;
  /** How long a new domain may stay unverified before it is `failed`. */
  domainVerifyTtlMs: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  proofRequestDayMs: number;
  proofMomentThreshold: number;
  proofAskCooldownDays: number;
  proofOpportunityTtlDays: number;
  proofHookRatePerMinute: number;
  proofStreamWebhookSecret: string | undefined;
  /** The video host's API (Cloudflare Stream's `.../accounts/<id>/stream`); unset: approved videos are not copied. */
  proofStreamApiUrl: string | undefined;
  proofStreamApiToken: string | undefined;
  /** The service's public origin, from which the host fetches an original through its source link. */
  proofStreamSourceBaseUrl: string;
  proofStreamLinkTtlSeconds: number;
  proofHealthIntervalMs: number;
  proofHealthConsentExpiryDays: number;
  /** Rooms (docs/configuration.md): how far behind a reader gets a snapshot, how many messages it holds, how long an approval waits. */
  roomSnapshotThreshold: number;
  roomSnapshotMessages: number;
  roomApprovalTtlMs: number;
  /** Room events older than this may be compacted away by the maintenance workflow. */
  roomEventRetentionMs: number;
  /** Distinct reporters that hide a message (docs/rooms.md#reactions-attachments-polls-and-moderation), and the largest attachment upload. */
  roomReportThreshold: number;
  roomAttachmentMaxBytes: number;
  /** How long a stopping worker lets running activities finish before cancelling them (they are retried elsewhere). */
  workerShutdownGraceMs: number;
  /** How long a stopping API keeps serving while /readyz says 503, so a proxy stops sending it requests first. */
  apiDrainMs: number;
  /** `npm start`: how many API processes share PORT (one a core; each holds a pool of 10 connections). */
  apiProcesses: number;
  /** The worker's metrics listener (GET /metrics, GET /healthz) on HOST; 0: none. */
  workerMetricsPort: number;
  /** A similar feature or signal scoring at least this (0 to 1) is suggested as a duplicate (docs/customer-loop.md). */
  duplicateThreshold: number;
  /** A workflow bundle built beforehand (bundleWorkflowCode's code, as a file): the worker starts without bundling. */
  workflowBundlePath: string | undefined;
  /** Key-encryption keys of secrets at rest (runtime/secret-box.ts); unset: a generated one under dataDir. */
  secretKeys: string | undefined;
}

/** Whether captions can be made at all (docs/configuration.md): without these, the caption routes answer 503. */
export const transcriptionConfigured = (config: Pick<Config, 'transcribeBaseUrl' | 'transcribeModel'>): boolean =>
  Boolean(config.transcribeBaseUrl && config.transcribeModel);

export class ConfigError extends StartupError {}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function fraction(env: Env, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(raw)) throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`);
  return Number(raw);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function proxyAddress(value: string): boolean {
  if (PROXY_NAMES.includes(value)) return true;
  if (!value.includes('/')) return ipaddr.isValid(value);
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

/** SV_TRUST_PROXY: false (default), true (any proxy: only behind one that strips the header), a hop count, or addresses/CIDRs. */
function trustProxy(env: Env): boolean | number | string[] {
  const raw = text(env, 'SV_TRUST_PROXY');
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return int(env, 'SV_TRUST_PROXY', 0, 1, 100);
  const list = raw.split(',').map((a) => a.trim()).filter(Boolean);
  const bad = list.find((a) => !proxyAddress(a));
  if (bad !== undefined) {
    throw new ConfigError(`SV_TRUST_PROXY must be true, false, a hop count or comma-separated addresses/CIDRs (or loopback, linklocal, uniquelocal), got "${bad}"`);
  }
  return list;
}

/** TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together; an API key is the other way in, not both. */
function temporalTls(env: Env): Pick<Config, 'temporalTlsCert' | 'temporalTlsKey' | 'temporalTlsCa' | 'temporalTlsServerName' | 'temporalApiKey'> {
  const cert = text(env, 'TEMPORAL_TLS_CERT');
  const key = text(env, 'TEMPORAL_TLS_KEY');
  const apiKey = text(env, 'TEMPORAL_API_KEY');
  if ((cert === undefined) !== (key === undefined)) throw new ConfigError('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY are set together (mTLS), or neither');
  if (cert !== undefined && apiKey !== undefined) throw new ConfigError('set TEMPORAL_API_KEY or TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY, not both');
  return {
    temporalTlsCert: cert, temporalTlsKey: key, temporalApiKey: apiKey,
    temporalTlsCa: text(env, 'TEMPORAL_TLS_CA'), temporalTlsServerName: text(env, 'TEMPORAL_TLS_SERVER_NAME'),
  };
}

const GiB = 1024 * 1024 * 1024;

const S3_VARIABLES = ['MEDIA_S3_ENDPOINT', 'MEDIA_S3_BUCKET', 'MEDIA_S3_REGION', 'MEDIA_S3_ACCESS_KEY_ID', 'MEDIA_S3_SECRET_ACCESS_KEY'];

function mediaS3(env: Env): Config['mediaS3'] {
  const values = S3_VARIABLES.map((name) => text(env, name));
  if (values.every((v) => v === undefined)) return null;
  const missing = S3_VARIABLES.filter((_, i) => values[i] === undefined);
  if (missing.length > 0) throw new ConfigError(`the S3 media store needs all of ${S3_VARIABLES.join(', ')}; missing ${missing.join(', ')}`);
  const [endpoint, bucket, region, accessKeyId, secretAccessKey] = values as string[];
  return { endpoint, bucket, region, accessKeyId, secretAccessKey };
}

/**
 * The origin a browser on this machine reaches the service at: a wildcard listen address (0.0.0.0, ::)
 * answers on loopback, an IPv6 address is bracketed. Links built from it follow HOST and PORT.
 */
export function localOrigin(host: string, port: number): string {
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  const name = wildcard ? '127.0.0.1' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** Reads every setting from the environment; the defaults are the spec's values. */
export function loadConfig(env: Env = process.env): Config {
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const port = int(env, 'PORT', 3000, 0, 65535);
  const publicBaseUrl = localOrigin(host, port);
  const environment = text(env, 'SV_ENVIRONMENT') ?? 'production';
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(environment)) {
    throw new ConfigError(`SV_ENVIRONMENT must be a lower-case name such as production, got "${environment}"`);
  }
  return {
    host,
    port,
    publicBaseUrl,
    dataDir: path.resolve(text(env, 'SV_DATA_DIR') ?? '.data'),
    dataDirFromEnv: text(env, 'SV_DATA_DIR') !== undefined,
    secretKeys: text(env, 'SV_SECRET_KEYS'),
    workflowBundlePath: text(env, 'SV_WORKFLOW_BUNDLE'),
    workerShutdownGraceMs: int(env, 'SV_WORKER_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    apiDrainMs: int(env, 'SV_API_DRAIN_MS', 5_000, 0, 600_000),
    // Eight at most by default: the embedded PostgreSQL takes 100 connections.
    apiProcesses: int(env, 'SV_API_PROCESSES', Math.min(os.availableParallelism(), 8), 1, 64),
    workerMetricsPort: int(env, 'SV_WORKER_METRICS_PORT', 9464, 0, 65535),
    embeddedPgPort: int(env, 'SV_EMBEDDED_PG_PORT', 54329, 1, 65535),
    temporalDevPort: int(env, 'TEMPORAL_DEV_PORT', 7233, 1, 65535),
    temporalDevUiPort: int(env, 'TEMPORAL_DEV_UI_PORT', 8233, 1, 65535),
    temporalCli: text(env, 'TEMPORAL_CLI'),
    databaseUrl: text(env, 'DATABASE_URL'),
    temporalAddress: text(env, 'TEMPORAL_ADDRESS'),
    temporalNamespace: text(env, 'TEMPORAL_NAMESPACE') ?? 'default',
    ...temporalTls(env),
    taskQueue: text(env, 'SV_TASK_QUEUE') ?? 'customer-loop-proof',
    environment,
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 120, 1, 1_000_000),
    publicRateLimitPerMinute: int(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    trustProxy: trustProxy(env),
    sessionTtlHours: int(env, 'SV_SESSION_TTL_HOURS', 12, 1, 24 * 30),
    consoleUrl: (text(env, 'SV_CONSOLE_URL') ?? `${publicBaseUrl}/console`).replace(/\/+$/, ''),
    signInPerEmailPerMinute: int(env, 'SV_SIGN_IN_PER_EMAIL_PER_MINUTE', 3, 1, 1_000_000),
    signInPerAddressPerMinute: int(env, 'SV_SIGN_IN_PER_ADDRESS_PER_MINUTE', 20, 1, 1_000_000),
    identityTokenMaxTtlSeconds: int(env, 'SV_IDENTITY_TOKEN_MAX_TTL_SECONDS', 900, 10, 86_400),
    maintenanceIntervalMs: int(env, 'SV_MAINTENANCE_INTERVAL_MS', 300_000, 100, 86_400_000),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
    webhookRetryInitialMs: int(env, 'WEBHOOK_RETRY_INITIAL_MS', 30_000, 1, 86_400_000),
    webhookRetryMaxMs: int(env, 'WEBHOOK_RETRY_MAX_MS', 3_600_000, 1, 86_400_000),
    webhookAllowPrivateTargets: bool(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    webhookBatchConcurrency: int(env, 'WEBHOOK_BATCH_CONCURRENCY', 32, 1, 1000),
    // Shorter than other relays' pause: an event's first attempt waits on it.
    webhookRelayIdleMs: int(env, 'WEBHOOK_RELAY_IDLE_MS', 100, 10, 60_000),
    // Deliveries a batch workflow takes: fewer, larger batches carried a burst faster (bench:webhooks, docs/performance.md).
    webhookBatchSize: int(env, 'WEBHOOK_BATCH_SIZE', 500, 1, 1000),
    relayBatchSize: int(env, 'SV_RELAY_BATCH_SIZE', 100, 1, 1000),
    relayIdleMs: int(env, 'SV_RELAY_IDLE_MS', 500, 10, 60_000),
    aiBaseUrl: text(env, 'AI_BASE_URL'),
    aiApiKey: text(env, 'AI_API_KEY'),
    aiModel: text(env, 'AI_MODEL'),
    proofMonthlySubmissionAllowance: int(env, 'PROOF_MONTHLY_SUBMISSION_ALLOWANCE', 1_000, 0, 100_000_000),
    proofApprovalReminderMs: int(env, 'PROOF_APPROVAL_REMINDER_MS', 86_400_000, 100, 30 * 86_400_000),
    proofRevocationSlaMs: int(env, 'PROOF_REVOCATION_SLA_MS', 72 * 3_600_000, 100, 90 * 86_400_000),
    proofDeletionRecoveryMs: int(env, 'PROOF_DELETION_RECOVERY_MS', 30 * 86_400_000, 100, 365 * 86_400_000),
    signalMonthlyAllowance: int(env, 'SV_SIGNAL_MONTHLY_ALLOWANCE', 10_000, 0, 1_000_000_000),
    signalDailyCeiling: int(env, 'SV_SIGNAL_DAILY_CEILING', 100_000, 1, 1_000_000_000),
    signalRelayBatch: int(env, 'SV_SIGNAL_RELAY_BATCH', 50, 1, 1000),
    signalRelayIdleMs: int(env, 'SV_SIGNAL_RELAY_IDLE_MS', 1_000, 10, 600_000),
    aiMaxAttempts: int(env, 'SV_AI_MAX_ATTEMPTS', 3, 1, 20),
    aiRetryInitialMs: int(env, 'SV_AI_RETRY_INITIAL_MS', 2_000, 1, 600_000),
    aiTimeoutMs: int(env, 'SV_AI_TIMEOUT_MS', 30_000, 100, 600_000),
    aiWaitMs: int(env, 'SV_AI_WAIT_MS', 120_000, 100, 600_000),
    aiEvaluatedModels: (text(env, 'SV_AI_EVALUATED_MODELS') ?? '').split(',').map((m) => m.trim()).filter(Boolean),
    aiMonthlyAllowance: int(env, 'SV_AI_MONTHLY_ALLOWANCE', 1_000, 0, 100_000_000),
    inboxHeartbeatMs: int(env, 'SV_INBOX_HEARTBEAT_MS', 15_000, 100, 600_000),
    inboxStreamsPerEndUser: int(env, 'SV_INBOX_STREAMS_PER_END_USER', 5, 1, 100),
    inboxStreamsPerProcess: int(env, 'SV_INBOX_STREAMS_PER_PROCESS', 1_000, 1, 1_000_000),
    collectPageUrl: (text(env, 'PROOF_COLLECT_PAGE_URL') ?? `${publicBaseUrl}/collect`).replace(/\/+$/, ''),
    draftTtlDays: int(env, 'PROOF_DRAFT_TTL_DAYS', 30, 1, 3650),
    uploadTtlMs: int(env, 'PROOF_UPLOAD_TTL_MS', 86_400_000, 100, 30 * 86_400_000),
    uploadQuotas: {
      draftBytes: int(env, 'PROOF_UPLOAD_DRAFT_MAX_BYTES', GiB, 1, 1024 * GiB),
      flowDailyBytes: int(env, 'PROOF_UPLOAD_FLOW_DAILY_BYTES', 20 * GiB, 1, 1024 * 1024 * GiB),
      addressDailyBytes: int(env, 'PROOF_UPLOAD_ADDRESS_DAILY_BYTES', 2 * GiB, 1, 1024 * 1024 * GiB),
    },
    unsubmittedMediaTtlMs: int(env, 'PROOF_UNSUBMITTED_MEDIA_TTL_MS', 86_400_000, 100, 30 * 86_400_000),
    assembleWaitMs: int(env, 'PROOF_ASSEMBLE_WAIT_MS', 10_000, 0, 600_000),
    customerOriginsCacheMs: int(env, 'PROOF_CORS_CACHE_MS', 30_000, 0, 600_000),
    controlLinkTtlDays: int(env, 'PROOF_CONTROL_LINK_TTL_DAYS', 365, 1, 3650),
    personLinkPerMinute: int(env, 'PROOF_PERSON_LINK_PER_MINUTE', 5, 1, 1_000_000),
    dailySubmissionCeiling: int(env, 'PROOF_DAILY_SUBMISSION_CEILING', 10_000, 1, 1_000_000_000),
    transcribeBaseUrl: text(env, 'TRANSCRIBE_BASE_URL'),
    transcribeApiKey: text(env, 'TRANSCRIBE_API_KEY'),
    transcribeModel: text(env, 'TRANSCRIBE_MODEL'),
    mediaS3: mediaS3(env),
    collectCnameTarget: text(env, 'PROOF_COLLECT_CNAME_TARGET') ?? 'collect.proof.invalid',
    domainDnsServers: (text(env, 'PROOF_DOMAIN_DNS_SERVERS') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    domainCheckIntervalMs: int(env, 'PROOF_DOMAIN_CHECK_INTERVAL_MS', 600_000, 100, 86_400_000),
    domainVerifyTtlMs: int(env, 'PROOF_DOMAIN_VERIFY_TTL_MS', 3 * 86_400_000, 100, 30 * 86_400_000),
    smtpUrl: text(env, 'SMTP_URL'),
    mailFrom: text(env, 'MAIL_FROM') ?? 'Proof <no-reply@proof.invalid>',
    proofRequestDayMs: int(env, 'PROOF_REQUEST_DAY_MS', 86_400_000, 10, 86_400_000),
    proofMomentThreshold: int(env, 'PROOF_MOMENT_THRESHOLD', 70, 0, 100),
    proofAskCooldownDays: int(env, 'PROOF_ASK_COOLDOWN_DAYS', 90, 0, 3650),
    proofOpportunityTtlDays: int(env, 'PROOF_OPPORTUNITY_TTL_DAYS', 30, 1, 3650),
    proofHookRatePerMinute: int(env, 'PROOF_HOOK_RATE_PER_MINUTE', 120, 1, 1_000_000),
    proofStreamWebhookSecret: text(env, 'PROOF_STREAM_WEBHOOK_SECRET'),
    proofStreamApiUrl: text(env, 'PROOF_STREAM_API_URL')?.replace(/\/+$/, ''),
    proofStreamApiToken: text(env, 'PROOF_STREAM_API_TOKEN'),
    proofStreamSourceBaseUrl: (text(env, 'PROOF_STREAM_SOURCE_BASE_URL') ?? publicBaseUrl).replace(/\/+$/, ''),
    proofStreamLinkTtlSeconds: int(env, 'PROOF_STREAM_LINK_TTL_SECONDS', 900, 10, 86_400),
    proofHealthIntervalMs: int(env, 'PROOF_HEALTH_INTERVAL_MS', 86_400_000, 100, 30 * 86_400_000),
    proofHealthConsentExpiryDays: int(env, 'PROOF_HEALTH_CONSENT_EXPIRY_DAYS', 14, 1, 365),
    roomSnapshotThreshold: int(env, 'SV_ROOM_SNAPSHOT_THRESHOLD', 500, 1, 1_000_000),
    roomSnapshotMessages: int(env, 'SV_ROOM_SNAPSHOT_MESSAGES', 50, 1, 1_000),
    roomApprovalTtlMs: int(env, 'SV_ROOM_APPROVAL_TTL_MS', 7 * 86_400_000, 100, 365 * 86_400_000),
    roomEventRetentionMs: int(env, 'SV_ROOM_EVENT_RETENTION_MS', 30 * 86_400_000, 1, 3650 * 86_400_000),
    roomReportThreshold: int(env, 'SV_ROOM_REPORT_THRESHOLD', 3, 1, 1000),
    roomAttachmentMaxBytes: int(env, 'SV_ROOM_ATTACHMENT_MAX_BYTES', 10 * 1024 * 1024, 1, 100 * 1024 * 1024),
    duplicateThreshold: fraction(env, 'SV_DUPLICATE_THRESHOLD', 0.7),
  };
}
