import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from '../api/middleware/error-envelope';
import { AppError, validationFailed } from '../lib/errors';

/** What Node's HTTP parser says of a request it could not read (its `clientError`). */
type ParserError = Error & { code?: string; reason?: string; bytesParsed?: number; rawPacket?: Buffer };

/**
 * A request Node's HTTP parser refuses never reaches the app: a NUL or another control character in
 * a header, a header name that is not a token, a request line that is not HTTP. Node would answer a
 * bare 400 and close; this answers in the one error envelope instead, naming the header when it can
 * (docs/decisions/0360-well-formed-text-at-the-door.md), and closes as Node does: the parser cannot
 * go on reading that connection. Header values the parser does accept come to the app decoded as
 * latin1, one character a byte, so they can hold no lone surrogate.
 */
export function answerUnparsableRequests(server: Server): Server {
  server.on('clientError', (err: ParserError, socket: Socket) => {
    // Node's own rule: a connection reset has no one to answer, and a connection that already
    // answered something (an earlier request on it) gets no second status line.
    if (err.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const refusal = refusalOf(err);
    const body = JSON.stringify(errorBody(refusal));
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
  return server;
}

function refusalOf(err: ParserError): AppError {
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return new AppError(431, 'HEADERS_TOO_LARGE', 'The request headers are larger than this server reads');
  if (err.code === 'HPE_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new AppError(408, 'REQUEST_TIMEOUT', 'The request did not arrive in time');
  if (err.code === 'HPE_INVALID_HEADER_TOKEN' && err.reason === 'Invalid header value char') {
    const name = headerAt(err.rawPacket, err.bytesParsed);
    if (name)
      return validationFailed([
        { in: 'header', path: name, message: 'must not contain NUL or another control character' },
      ]);
  }
  if (err.code === 'HPE_INVALID_HEADER_TOKEN')
    return new AppError(400, 'MALFORMED_REQUEST', 'A header of the request is not valid HTTP');
  return new AppError(400, 'MALFORMED_REQUEST', 'The request is not valid HTTP');
}

/**
 * The name of the header whose value the parser stopped in: the line of the packet up to where it
 * stopped, before its colon. Unknown (undefined) when that line began in an earlier packet.
 */
function headerAt(packet: Buffer | undefined, stoppedAt: number | undefined): string | undefined {
  if (!packet || stoppedAt === undefined) return undefined;
  const head = packet.subarray(0, stoppedAt).toString('latin1');
  const line = head.slice(head.lastIndexOf('\n') + 1);
  const colon = line.indexOf(':');
  const name = colon > 0 ? line.slice(0, colon) : '';
  // The parser read the name as a token before it reached the value: anything else is not a name.
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) ? name : undefined;
}
