import { createServer } from 'node:net';

/** A TCP port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The ports the full Temporal server listens on, as offsets from its base (gRPC, membership, HTTP, metrics). */
export const TEMPORAL_PORT_OFFSETS = [0, 1, 2, 6, 10, 100, 101, 102, 106, 200];

/**
 * The first port of a block of `size` ports, each free on loopback right now (the full Temporal
 * server takes ports at offsets 0 to 206 of its base: deploy/temporal/production-postgres12.yaml).
 */
export async function freePortRange(size: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Temporal stores membership ports as smallint: the whole block stays under 32768.
    const base = 20_000 + Math.floor(Math.random() * (32_500 - size - 20_000));
    if (await allFree(base, size)) return base;
  }
  throw new Error(`no block of ${size} free ports found`);
}

async function allFree(base: number, size: number): Promise<boolean> {
  for (const offset of TEMPORAL_PORT_OFFSETS.filter((o) => o < size)) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.unref();
      server.once('error', () => resolve(false));
      server.listen(base + offset, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}
