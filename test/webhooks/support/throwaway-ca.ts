import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Issued {
  cert: string;
  key: string;
}

/**
 * A certificate authority made for one test file with the `openssl` CLI (P-256 keys, one day): it
 * issues a receiver's server certificate (for 127.0.0.1 and localhost) and client certificates.
 * Nothing of it outlives the test: `dispose()` removes its folder.
 */
export function throwawayCa(name: string) {
  const dir = mkdtempSync(join(tmpdir(), 'throwaway-ca-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  let n = 0;
  ssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );

  function issue(cn: string, extensions: string[]): Issued {
    const base = `c${++n}`;
    ssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${cn}`,
      '-keyout',
      `${base}.key`,
      '-out',
      `${base}.crt`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      ...extensions.flatMap((e) => ['-addext', e]),
    );
    return { cert: read(`${base}.crt`), key: read(`${base}.key`) };
  }

  /** A client certificate for a key made elsewhere (node:crypto in a test), in PEM. */
  function clientFor(cn: string, key: string): Issued {
    const base = `c${++n}`;
    writeFileSync(join(dir, `${base}.key`), key);
    ssl(
      'req',
      '-x509',
      '-key',
      `${base}.key`,
      '-days',
      '1',
      '-subj',
      `/CN=${cn}`,
      '-out',
      `${base}.crt`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-addext',
      'extendedKeyUsage=clientAuth',
      '-addext',
      'basicConstraints=CA:FALSE',
    );
    return { cert: read(`${base}.crt`), key };
  }

  return {
    cert: read('ca.crt'),
    clientFor,
    /** A server certificate for a receiver on 127.0.0.1 / localhost. */
    server: () =>
      issue('localhost', [
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        'extendedKeyUsage=serverAuth',
        'basicConstraints=CA:FALSE',
      ]),
    /** A client certificate, as an integrator's CA issues one to its sender. */
    client: (cn: string) => issue(cn, ['extendedKeyUsage=clientAuth', 'basicConstraints=CA:FALSE']),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
