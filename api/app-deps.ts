import type { Client } from '@temporalio/client';
import type { FastifyServerOptions } from 'fastify';
import type { DataSource } from 'typeorm';
import type { Config } from '../runtime/config';

/** What every route plugin is registered with; apart from app.ts so a route never imports the app that registers it. */
export interface AppDeps {
  dataSource: DataSource;
  temporal: Client;
  config: Config;
  logger?: FastifyServerOptions['logger'];
}
