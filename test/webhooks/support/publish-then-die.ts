/**
 * A publisher that dies at the worst moment: its event is committed to the outbox, and the process
 * is killed (SIGKILL, no cleanup) before the dispatcher can start the fan-out.
 *   DATABASE_URL=... EVENT='{"id":...}' tsx publish-then-die.ts
 */
import { loadConfig } from '../../../lib/config';
import { openOrm } from '../../../db/orm';
import { publishEvents } from '../../../activities/event-publisher';
import type { ServiceEvent } from '../../../domain/events';

async function main(): Promise<void> {
  const orm = await openOrm(loadConfig());
  const event = JSON.parse(process.env.EVENT!) as ServiceEvent;
  await publishEvents({ orm, dispatcher: { dispatch: async () => void process.kill(process.pid, 'SIGKILL') } }, [
    event,
  ]);
  process.exit(3); // not reached: the dispatcher killed the process
}

void main();
