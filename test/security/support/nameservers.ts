import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

export interface Nameserver {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  /** Queries received so far. */
  queries: number;
  stop(): Promise<void>;
}

async function bound(onQuery: (socket: Socket, msg: Buffer, from: { address: string; port: number }) => void) {
  const socket = createSocket('udp4');
  const server: Nameserver = {
    address: '',
    queries: 0,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (msg, from) => {
    server.queries++;
    onQuery(socket, msg, from);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  server.address = `127.0.0.1:${(socket.address() as AddressInfo).port}`;
  return server;
}

/** A nameserver that reads every query and never answers one. */
export function silentNameserver(): Promise<Nameserver> {
  return bound(() => undefined);
}

/**
 * A nameserver that answers A queries for every name with `addresses` (and AAAA with none): the
 * smallest DNS answer (RFC 1035 §4.1), the question echoed, one A record per address.
 */
export function answeringNameserver(addresses: string[]): Promise<Nameserver> {
  return bound((socket, query, from) => {
    let end = 12;
    while (query[end] !== 0) end += query[end]! + 1;
    const question = query.subarray(12, end + 5);
    const type = question.readUInt16BE(question.length - 4);
    const records = type === 1 ? addresses : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(0x8180, 2); // a response, recursion available, no error
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((a) => {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(4, 10);
      a.split('.').forEach((octet, i) => rr.writeUInt8(Number(octet), 12 + i));
      return rr;
    });
    socket.send(Buffer.concat([header, question, ...answers]), from.port, from.address);
  });
}
