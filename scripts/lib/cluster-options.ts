import type { ServiceProcess } from './service-process';

/** What `npm run cluster` runs, and the cluster tests drive: ports and counts. */
export interface ClusterOptions {
  dataDir: string;
  /** Public port of the balancer in front of the API instances. */
  port: number;
  apiPorts: number[];
  workers: number;
  temporalPortBase: number;
  /** A PostgreSQL server to use (its URL names the service's database); otherwise an embedded one on pgPort. */
  databaseUrl?: string;
  /** With databaseUrl: the owner role's URL of that database, for migrations (DATABASE_MIGRATION_URL); unset, databaseUrl. */
  migrationUrl?: string;
  pgPort: number;
  uiPort?: number;
  /** Paths of the tools: the folder with `server` and `sql`, and the UI server (optional). */
  temporalServerDir: string;
  temporalUi?: string;
  /**
   * Traces: Zipkin's jar (scripts/tools.sh zipkin) and its one port (spans in, API and
   * UI out); the workers and API instances export to it, unless the environment already names an
   * OTEL_* exporter or endpoint of its own. Unset: no traces.
   */
  zipkin?: { jar: string; port: number };
  /** Run dist/ (npm run build) rather than the TypeScript source. */
  compiled: boolean;
  /**
   * Another build's folder whose dist/ the workers and API instances run, and whose own migrations
   * (`dist/scripts/migrate.js`) lay the schema: the rolling-upgrade test starts from the previous
   * release (scripts/previous-release.sh). Unset: this checkout.
   */
  release?: string;
  /**
   * Make this build's Worker Deployment version Current once its workers poll (scripts/lib/version-routing.ts),
   * when its workers are versioned. Default true; the rolling-upgrade test moves the routing itself.
   */
  promote?: boolean;
  /** Extra environment for every worker and API instance. */
  env?: Record<string, string>;
  output: NodeJS.WritableStream;
  /** Where `output` goes (a file's path), named when a part fails. */
  logPath?: string;
  /**
   * HTTPS on `port`: Caddy ends TLS (its own local CA) in front of a gateway as deploy/gateway has
   * it, on `innerPort`, instead of the balancer; PUBLIC_BASE_URL is then https://localhost:<port>.
   */
  tls?: { caddy: string; innerPort: number };
}

export interface Cluster {
  baseUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  uiUrl: string | null;
  /** Zipkin's UI, when it runs. */
  tracesUrl: string | null;
  env: Record<string, string>;
  workers: ServiceProcess[];
  apis: ServiceProcess[];
  /** The owner's URL of the service's database, for migrations (the rolling-upgrade test migrates mid-roll). */
  migrationUrl: string;
  /** Kill (SIGKILL) and start again the Temporal server, for the fault tests. */
  killTemporal(): Promise<void>;
  startTemporal(): Promise<void>;
  stop(): Promise<void>;
}
