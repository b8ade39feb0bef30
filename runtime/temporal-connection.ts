import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { Config, ConfigError } from './config';

/** What the client, the worker and the CLI connect to Temporal with: the address, and TLS or an API key when configured. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
}

type TlsSettings = Pick<Config, 'temporalTlsCert' | 'temporalTlsKey' | 'temporalTlsCa' | 'temporalTlsServerName' | 'temporalApiKey'>;

/** A PEM value given inline (it starts with `-----BEGIN`) or as the path of a file holding it. */
function pem(value: string, name: string): Buffer {
  if (value.startsWith('-----BEGIN')) return Buffer.from(value.replace(/\\n/g, '\n'));
  try {
    return fs.readFileSync(value);
  } catch (err) {
    throw new ConfigError(`${name} is neither PEM text nor a readable file (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}): ${value}`);
  }
}

/**
 * Plain gRPC for the dev server and a compose Temporal; mTLS with TEMPORAL_TLS_CERT/KEY; TLS with an
 * API key for TEMPORAL_API_KEY (Temporal Cloud). The namespace (TEMPORAL_NAMESPACE) is the client's.
 */
export function temporalConnectionOptions(config: TlsSettings, address: string): TemporalConnectionOptions {
  const tls: TLSConfig = {};
  if (config.temporalTlsCert && config.temporalTlsKey) {
    tls.clientCertPair = { crt: pem(config.temporalTlsCert, 'TEMPORAL_TLS_CERT'), key: pem(config.temporalTlsKey, 'TEMPORAL_TLS_KEY') };
  }
  if (config.temporalTlsCa) tls.serverRootCACertificate = pem(config.temporalTlsCa, 'TEMPORAL_TLS_CA');
  if (config.temporalTlsServerName) tls.serverNameOverride = config.temporalTlsServerName;
  // An empty key (`TEMPORAL_API_KEY=` in an .env file) is no key: it must not turn TLS on either.
  const apiKey = config.temporalApiKey?.trim() || undefined;
  const secured = Object.keys(tls).length > 0 || apiKey !== undefined;
  return {
    address,
    ...(secured ? { tls } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}
