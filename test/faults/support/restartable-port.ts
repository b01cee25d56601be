import { freePortRange } from '../../../scripts/lib/free-port';

/**
 * A port free on loopback now and below the kernel's ephemeral range (32768 and up), for a server a fault test stops
 * and starts again on it: while it is down, no outgoing connection of another process can be given its number (a
 * fault test's PostgreSQL once failed to come back with "could not create any TCP/IP sockets").
 */
export const freeRestartablePort = (): Promise<number> => freePortRange(1);
