import { startTracing } from '../lib/tracing';

// Imported first by api/main.ts: the SDK (when OTEL_* turn it on) must patch http and pg before they load.
startTracing('tranche-api');
