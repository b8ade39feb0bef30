import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { DataSource } from 'typeorm';
import { Config, loadConfig } from '../runtime/config';
import { databaseUrlOf, openDatabase, temporalAddressOf } from '../runtime/services';
import { onShutdown } from '../runtime/shutdown';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { createWorker, ensureMaintenance } from './worker';

export interface RunningWorker {
  stop: () => Promise<void>;
}

/** Polls the task queue until stopped; any number of these may run against one Temporal. */
export async function startWorker(config: Config, dataSource: DataSource, temporalAddress: string): Promise<RunningWorker> {
  const connection = await NativeConnection.connect({ address: temporalAddress });
  const clientConnection = await Connection.connect({ address: temporalAddress });
  const worker = await createWorker({ connection, dataSource, config });
  await ensureMaintenance(new Client({ connection: clientConnection, namespace: config.temporalNamespace }), config);
  const running = worker.run();
  return {
    stop: async () => {
      worker.shutdown();
      await running;
      await clientConnection.close();
      await connection.close();
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  installTemporalLogger();
  const ds = await openDatabase(databaseUrlOf(config));
  const worker = await startWorker(config, ds, temporalAddressOf(config));
  console.log(`[sv] worker polling task queue ${config.taskQueue} on ${temporalAddressOf(config)}`);
  onShutdown([() => ds.destroy(), worker.stop], (line) => console.log(`[sv] ${line}`));
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`[sv] worker failed to start: ${(err as Error).message}`);
    process.exit(1);
  });
}
