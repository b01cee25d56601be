import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { buildConnector } from 'undici';
import type { EgressProxy, NoProxyRule } from '../../lib/runtime/config-parsers';
import type { HostResolver } from '../../lib/runtime/dns-resolver';
import { guardedLookup, refusal, SsrfRefusedError, type SsrfPolicy } from '../../lib/runtime/ssrf-guard';
import { noProxyMatcher } from './no-proxy';

/** Each step of a new connection (the proxy's TCP connect, its CONNECT answer, the TLS handshake) ends within this. */
const STEP_TIMEOUT_MS = 10_000;
/** A CONNECT answer's head may be this long at most. */
const ANSWER_HEAD_LIMIT = 16_384;

/** Where new connections go when WEBHOOK_HTTP_PROXY is set: the proxy, except for the targets WEBHOOK_NO_PROXY lists. */
export interface EgressRoute {
  proxy: EgressProxy;
  direct: (hostname: string, address: string, family: number) => boolean;
}

export const egressRoute = (proxy: EgressProxy, noProxy: NoProxyRule[]): EgressRoute => ({
  proxy,
  direct: noProxyMatcher(noProxy),
});

/**
 * What an attempt's record says when the proxy, not the target, failed it: always `proxy …`, so the
 * recorder can tell it from a receiver's failure (`isProxyFailure`).
 */
class ProxyConnectError extends Error {
  constructor(what: string) {
    super(`proxy ${what}`);
  }
}

/**
 * Whether a recorded attempt error is the egress proxy's (ProxyConnectError's words, alone or as the
 * reason an OAuth2 token request could not be made): the sender's failure, not the receiver's, so it
 * is retried on schedule but counted neither by the endpoint's circuit nor towards its failing spell
 * (docs/decisions/0405-egress-through-a-connect-proxy.md).
 */
export const isProxyFailure = (error: string | null): boolean =>
  error !== null && /^proxy |could not be reached \(proxy .*\)$/.test(error);

/**
 * undici's `connect` for a pool whose connections go through the egress proxy
 * (docs/decisions/0405-egress-through-a-connect-proxy.md). The target is resolved here, by the
 * process's resolver under the SSRF guard, exactly as the direct pool's lookup does, and the CONNECT
 * names the address that passed (`ip:port`): the proxy never resolves a target name, so it cannot
 * be sent where the guard refuses, and no second lookup can answer differently. The Host header is
 * undici's, from the URL; TLS (with the endpoint's client certificate, for mTLS) runs inside the
 * tunnel with the target's name as SNI, so the proxy sees neither the body nor the headers.
 * http:// targets are tunnelled the same way. A target WEBHOOK_NO_PROXY lists gets a direct TCP
 * connection to the same checked address.
 */
export function proxiedConnector(deps: {
  route: EgressRoute;
  policy: SsrfPolicy;
  resolver: HostResolver;
  /** The endpoint's client certificate and CA (mTLS pools). */
  tls?: Pick<ConnectionOptions, 'cert' | 'key' | 'ca'>;
}): buildConnector.connector {
  const lookup = guardedLookup(deps.policy, deps.resolver);
  const checked = (hostname: string) =>
    new Promise<{ address: string; family: number }>((resolve, reject) => {
      const literal = isIP(hostname);
      if (literal) {
        const cls = refusal(hostname, deps.policy);
        return cls
          ? reject(new SsrfRefusedError(hostname, hostname, cls))
          : resolve({ address: hostname, family: literal });
      }
      lookup(hostname, {}, (err, address, family) =>
        err ? reject(err) : resolve({ address: address as string, family: family ?? 4 }),
      );
    });

  async function open(opts: buildConnector.Options): Promise<Socket | TLSSocket> {
    const https = opts.protocol === 'https:';
    const hostname = opts.hostname.replace(/^\[|\]$/g, '');
    const port = Number(opts.port) || (https ? 443 : 80);
    const target = await checked(hostname);
    const socket = deps.route.direct(hostname, target.address, target.family)
      ? await openTcp(target.address, port, (why) => new Error(why))
      : await tunnel(deps.route.proxy, deps.resolver, target, port);
    if (!https) return socket;
    return handshake(socket, {
      ...deps.tls,
      // SNI and the certificate check name the target, never the address the tunnel went to.
      ...(isIP(hostname) ? { host: hostname } : { servername: opts.servername || hostname }),
    });
  }

  return (opts, callback) => {
    open(opts).then(
      (socket) => callback(null, socket),
      (err: Error) => callback(err, null),
    );
  };
}

/** A TCP connection within the step's time; `failure` words what the record says. */
function openTcp(host: string, port: number, failure: (why: string) => Error): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host, port, noDelay: true, keepAlive: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(failure(`connect to ${host}:${port} timed out after ${STEP_TIMEOUT_MS / 1000} s`));
    }, STEP_TIMEOUT_MS);
    const onError = (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(failure(err.code ?? err.message));
    };
    socket.once('error', onError).once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/** A tunnel to the checked address through the proxy: its TCP connection, then CONNECT and a 2xx. */
async function tunnel(
  proxy: EgressProxy,
  resolver: HostResolver,
  target: { address: string; family: number },
  port: number,
): Promise<Socket> {
  // The proxy is the operator's: its address is not the guard's to check, only resolved off the libuv pool.
  let proxyAddress = proxy.host;
  if (!isIP(proxy.host)) {
    const [first] = await resolver.resolve(proxy.host).catch((err: NodeJS.ErrnoException) => {
      throw new ProxyConnectError(`${proxy.host} does not resolve (${err.code ?? err.message})`);
    });
    if (!first) throw new ProxyConnectError(`${proxy.host} has no address`);
    proxyAddress = first.address;
  }
  const socket = await openTcp(proxyAddress, proxy.port, (why) => new ProxyConnectError(`unreachable: ${why}`));
  const authority = target.family === 6 ? `[${target.address}]:${port}` : `${target.address}:${port}`;
  socket.write(
    `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n` +
      (proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : '') +
      '\r\n',
  );
  try {
    await connectAnswer(socket);
  } catch (err) {
    socket.destroy();
    throw err;
  }
  return socket;
}

/** Reads the proxy's answer to CONNECT; resolves on 2xx, leaving whatever followed its head unread. */
function connectAnswer(socket: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const end = (err: Error | null, rest?: Buffer) => {
      clearTimeout(timer);
      socket.off('data', onData).off('error', onError).off('close', onClose);
      if (err) return reject(err);
      if (rest?.length) socket.unshift(rest);
      resolve();
    };
    const timer = setTimeout(
      () => end(new ProxyConnectError(`did not answer CONNECT within ${STEP_TIMEOUT_MS / 1000} s`)),
      STEP_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const at = head.indexOf('\r\n\r\n');
      if (at === -1) {
        if (head.length > ANSWER_HEAD_LIMIT) end(new ProxyConnectError('answered CONNECT with an oversized head'));
        return;
      }
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, at).toString('latin1'))?.[1];
      if (status === undefined) end(new ProxyConnectError('answered CONNECT with something that is not HTTP'));
      else if (!status.startsWith('2')) end(new ProxyConnectError(`refused CONNECT: ${status}`));
      else end(null, head.subarray(at + 4));
    };
    const onError = (err: NodeJS.ErrnoException) =>
      end(new ProxyConnectError(`connection failed before answering CONNECT: ${err.code ?? err.message}`));
    const onClose = () => end(new ProxyConnectError('closed the connection before answering CONNECT'));
    socket.on('data', onData).on('error', onError).on('close', onClose);
  });
}

/** TLS to the target inside the socket (a tunnel or a direct connection), within the step's time. */
function handshake(socket: Socket, options: ConnectionOptions): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ ...options, socket, ALPNProtocols: ['http/1.1'] });
    const timer = setTimeout(() => {
      tls.destroy();
      reject(new Error(`TLS handshake timed out after ${STEP_TIMEOUT_MS / 1000} s`));
    }, STEP_TIMEOUT_MS);
    const onError = (err: Error) => {
      clearTimeout(timer);
      tls.destroy();
      reject(err);
    };
    tls.once('error', onError).once('secureConnect', () => {
      clearTimeout(timer);
      tls.off('error', onError);
      resolve(tls);
    });
  });
}
