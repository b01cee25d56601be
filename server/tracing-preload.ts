import { startTracing } from '../lib/runtime/tracing';

// Imported first by server/main.ts: the SDK (when OTEL_* turn it on) must patch http and pg before they load.
startTracing('tranche-api');
