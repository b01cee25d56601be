import { generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { PATHS } from './support/hooks';
import { throwawayCa } from './support/throwaway-ca';
import { closeServer, firstAttempt as firstAttemptOf, listenOnLoopback } from './support/stack';

/**
 * Authenticated receivers: mutual TLS. A real HTTPS receiver on 127.0.0.1 that demands a
 * client certificate issued by the integrator's CA (made here, thrown away after); the endpoint is
 * given that certificate, its key and the CA the receiver's own certificate chains to. A certificate
 * from another CA fails the attempt with a clear error in its record; the key is sealed, never shown.
 */
describe('authenticated receivers: mutual TLS', () => {
  let svc: TestService;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  let receiver: Server;
  let url: string;
  const got: { path: string; clientCn: string }[] = [];
  /** A second receiver at another origin (another port) that asks for a certificate and takes any: what it was shown. */
  let elsewhere: Server;
  let elsewhereUrl: string;
  const shownElsewhere: { path: string; clientCn: string }[] = [];
  const integrator = throwawayCa('Integrator Test CA');
  const stranger = throwawayCa('Stranger Test CA');
  const client = integrator.client('tranche-sender');
  const base = PATHS.A.endpoints;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
    api = http(svc.baseUrl);
    staff = await actor(svc, newOrg(), ['staff']);
    const server = integrator.server();
    receiver = createServer(
      { ...server, ca: integrator.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        got.push({ path: req.url ?? '', clientCn: String(peer.subject?.CN ?? '') });
        req.resume();
        req.on('end', () => res.writeHead(200).end('ok'));
      },
    );
    url = await listenOnLoopback(receiver, 'https');
    elsewhere = createServer({ ...integrator.server(), requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      shownElsewhere.push({ path: req.url ?? '', clientCn: String(peer.subject?.CN ?? '') });
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    });
    elsewhereUrl = await listenOnLoopback(elsewhere, 'https');
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await closeServer(receiver);
    await closeServer(elsewhere);
    integrator.dispose();
    stranger.dispose();
  });

  const mtls = (issued: { cert: string; key: string }, ca = integrator.cert) => ({
    type: 'mtls',
    clientCertificate: issued.cert,
    clientKey: issued.key,
    caCertificate: ca,
  });
  const register = (hook: string, authentication?: unknown) =>
    api.post(base, staff.token, { url: `${url}/${hook}`, eventTypes: ['*'], authentication });
  const firstAttempt = (endpointId: string) => firstAttemptOf(api, staff, endpointId);

  it('delivers to a receiver that demands our client certificate; the key is sealed and never shown', async () => {
    const res = await register('good', mtls(client));
    expect(res.status).toBe(201);
    expect(res.body.data.authentication).toMatchObject({
      type: 'mtls',
      client_certificate: { subject: 'CN=tranche-sender', issuer: 'CN=Integrator Test CA' },
      ca_certificates: [{ subject: 'CN=Integrator Test CA' }],
    });
    expect(res.body.data.authentication.client_certificate.fingerprint_sha256).toMatch(
      /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/,
    );
    const keyBody = client.key.split('\n')[1]!;
    expect(JSON.stringify(res.body)).not.toContain(keyBody);
    const read = await api.get(`${base}/${res.body.data.id}`, staff.token);
    expect(read.body.data.authentication).toEqual(res.body.data.authentication);
    const [row] = await svc.orm.em
      .getConnection()
      .execute<{ authentication_secret_ciphertext: string; authentication: unknown }[]>(
        'select authentication_secret_ciphertext, authentication from webhook_endpoints where id = ?',
        [res.body.data.id],
      );
    expect(row!.authentication_secret_ciphertext).toMatch(/^v2:dev:/);
    expect(JSON.stringify(row)).not.toContain(keyBody);

    const attempt = await firstAttempt(res.body.data.id);
    expect(attempt).toMatchObject({ response_status: 200, error: null });
    expect(got.filter((g) => g.path === '/good')).toEqual([{ path: '/good', clientCn: 'tranche-sender' }]);
  });

  it('fails the attempt with a clear error when the receiver refuses our certificate, and PATCH changes or removes it', async () => {
    const res = await register('wrong', mtls(client));
    expect(res.status).toBe(201);
    const id = res.body.data.id;
    // A certificate of another CA: the receiver's TLS refuses it, nothing reaches its handler.
    const patched = await api.patch(`${base}/${id}`, staff.token, {
      authentication: mtls(stranger.client('impostor')),
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.authentication.client_certificate.issuer).toBe('CN=Stranger Test CA');
    const refused = await firstAttempt(id);
    expect(refused.response_status).toBeNull();
    expect(refused.error).toMatch(/^MTLS_REJECTED: the receiver refused the TLS connection/);
    expect(got.some((g) => g.path === '/wrong')).toBe(false);

    // Back to the right certificate: a new pool, and the next attempt goes through.
    await api.patch(`${base}/${id}`, staff.token, { authentication: mtls(client) });
    expect(await firstAttempt(id)).toMatchObject({ response_status: 200, error: null });

    // A CA the receiver's certificate does not chain to: we refuse the receiver.
    await api.patch(`${base}/${id}`, staff.token, { authentication: mtls(client, stranger.cert) });
    const untrusted = await firstAttempt(id);
    expect(untrusted.error).toMatch(/^MTLS_SERVER_UNTRUSTED: /);

    const removed = await api.patch(`${base}/${id}`, staff.token, { authentication: null });
    expect(removed.status).toBe(200);
    expect(removed.body.data.authentication).toBeNull();
    const [row] = await svc.orm.em
      .getConnection()
      .execute<{ a: unknown; s: unknown }[]>(
        'select authentication as a, authentication_secret_ciphertext as s from webhook_endpoints where id = ?',
        [id],
      );
    expect(row).toEqual({ a: null, s: null });
  });

  it('never presents our certificate at another origin: moving the url there asks for the authentication again', async () => {
    const e = await register('moving', mtls(client));
    expect(e.status).toBe(201);
    const id = e.body.data.id;
    const moved = await api.patch(`${base}/${id}`, staff.token, { url: `${elsewhereUrl}/moving` });
    const next = await firstAttempt(id);
    expect(shownElsewhere.filter((s) => s.clientCn !== '')).toEqual([]);
    expect({ status: moved.status, code: moved.body.error?.code }).toEqual({
      status: 409,
      code: 'AUTHENTICATION_NOT_CARRIED',
    });
    expect(moved.body.error.message).toContain(`authenticates to ${new URL(url).origin} with mtls`);
    expect(next).toMatchObject({ response_status: 200, error: null });
    expect(got.filter((g) => g.path === '/moving')).toEqual([{ path: '/moving', clientCn: 'tranche-sender' }]);
    // Given again with the url, it goes along.
    const along = await api.patch(`${base}/${id}`, staff.token, {
      url: `${elsewhereUrl}/moving`,
      authentication: mtls(client),
    });
    expect(along.status).toBe(200);
    expect(await firstAttempt(id)).toMatchObject({ response_status: 200, error: null });
    expect(shownElsewhere).toEqual([{ path: '/moving', clientCn: 'tranche-sender' }]);
  });

  it('takes client keys whose handshake costs little, and refuses the others with a 422 naming the field', async () => {
    // Made off the event loop: this process serves the API too.
    const generate = promisify(generateKeyPair) as (
      type: string,
      options?: object,
    ) => Promise<{ privateKey: KeyObject }>;
    const key = async (type: string, options?: object) =>
      (await generate(type, options)).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const rsa = (modulusLength: number) => key('rsa', { modulusLength });
    const ec = (namedCurve: string) => key('ec', { namedCurve });
    const allowed: [string, string][] = [
      ['rsa-2048', await rsa(2048)],
      ['rsa-4096', await rsa(4096)],
      ['ec-p256', await ec('prime256v1')],
      ['ec-p384', await ec('secp384r1')],
      ['ed25519', await key('ed25519')],
    ];
    for (const [kind, key] of allowed) {
      const res = await register(`key-${kind}`, mtls(integrator.clientFor(`sender-${kind}`, key)));
      expect([kind, res.status]).toEqual([kind, 201]);
      // A real handshake with it: the receiver sees the certificate of that key.
      expect([kind, await firstAttempt(res.body.data.id)]).toMatchObject([kind, { response_status: 200, error: null }]);
      expect(got.filter((g) => g.path === `/key-${kind}`)).toEqual([
        { path: `/key-${kind}`, clientCn: `sender-${kind}` },
      ]);
    }

    const allowedWords = 'allowed: RSA of 2048 to 4096 bits, EC on P-256 or P-384, or Ed25519';
    const refused: [string, string, string][] = [
      ['rsa-1024', await rsa(1024), 'is an RSA key of 1024 bits'],
      ['rsa-4608', await rsa(4608), 'is an RSA key of 4608 bits'],
      ['ec-p521', await ec('secp521r1'), 'is an EC key on secp521r1'],
      ['ec-secp256k1', await ec('secp256k1'), 'is an EC key on secp256k1'],
      ['ed448', await key('ed448'), 'is a key of type ed448'],
      ['x25519', await key('x25519'), 'is a key of type x25519'],
      ['rsa-pss', await key('rsa-pss', { modulusLength: 2048 }), 'is a key of type rsa-pss'],
      ['dsa', await key('dsa', { modulusLength: 2048, divisorLength: 256 }), 'is a key of type dsa'],
    ];
    for (const [kind, key, said] of refused) {
      // Each with a certificate of its own key (an X25519 key cannot sign: it is given beside another's).
      const issued = kind === 'x25519' ? { cert: client.cert, key } : integrator.clientFor(`refused-${kind}`, key);
      const res = await register(`refused-${kind}`, mtls(issued));
      expect([kind, res.status, res.body.error?.code, res.body.error?.details]).toEqual([
        kind,
        422,
        'VALIDATION_FAILED',
        [{ in: 'body', path: 'authentication.clientKey', message: `${said}; ${allowedWords}` }],
      ]);
    }
    // A key past the PEM cap is refused before it is parsed (an RSA key of 16384 bits is some 12.7 KB).
    const huge = `-----BEGIN PRIVATE KEY-----\n${'A'.repeat(9000)}\n-----END PRIVATE KEY-----\n`;
    const capped = await register('refused-huge', mtls({ cert: client.cert, key: huge }));
    expect([capped.status, capped.body.error.code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(JSON.stringify(capped.body.error.details)).toContain('clientKey');
    expect(JSON.stringify(capped.body.error.details)).toContain('at most 8192 characters');
    // PATCH is held to the same bounds.
    const id = (await register('patched-key', mtls(client))).body.data.id;
    const patched = await api.patch(`${base}/${id}`, staff.token, {
      authentication: mtls({ cert: client.cert, key: await rsa(1024) }),
    });
    expect([patched.status, patched.body.error.details[0].path]).toEqual([422, 'authentication.clientKey']);
  }, 120_000);

  it('refuses what cannot authenticate with the one error envelope and a clear message', async () => {
    const refused = async (authentication: unknown, message: RegExp, code = 'INVALID_AUTHENTICATION') => {
      const res = await register('refused', authentication);
      expect({ status: res.status, code: res.body.error.code }).toEqual({
        status: code === 'INVALID_AUTHENTICATION' ? 400 : 422,
        code,
      });
      expect(res.body.error.message).toMatch(message);
    };
    const other = integrator.client('other');
    await refused(
      { ...mtls(client), clientCertificate: 'not a certificate' },
      /clientCertificate holds no PEM certificate/,
    );
    await refused(
      { ...mtls(client), clientCertificate: client.cert.replace(/\n[A-Za-z0-9+/]{10}/, '\nAAAAAAAAAA') },
      /clientCertificate: certificate 1 does not parse/,
    );
    await refused({ ...mtls(client), clientKey: 'nope' }, /clientKey is not a PEM private key/);
    await refused({ ...mtls(client), clientKey: other.key }, /clientKey is not the private key of clientCertificate/);
    await refused({ ...mtls(client), caCertificate: 'x' }, /caCertificate holds no PEM certificate/);
    const oauth = { type: 'oauth2_client_credentials', clientId: 'c', clientSecret: 's' };
    await refused({ ...oauth, tokenUrl: 'http://auth.example.com/token' }, /tokenUrl: the URL must use https/);
    await refused(
      { ...oauth, tokenUrl: 'https://10.1.2.3/token' },
      /tokenUrl: 10\.1\.2\.3 resolves to a private address/,
    );
    await refused({ ...oauth, tokenUrl: 'https://169.254.169.254/token' }, /resolves to a metadata address/);
    await refused({ ...oauth, tokenUrl: 'https://u:p@auth.example.com/token' }, /credentials in the URL/);
    const overHttp = await api.post(base, staff.token, {
      url: 'http://127.0.0.1:9/plain',
      eventTypes: ['*'],
      authentication: mtls(client),
    });
    expect({ status: overHttp.status, message: overHttp.body.error.message }).toEqual({
      status: 400,
      message: 'Invalid authentication: mutual TLS needs an https url',
    });
    await refused({ type: 'mtls', clientCertificate: client.cert }, /.+/, 'VALIDATION_FAILED');
    await refused({ type: 'basic', username: 'u' }, /.+/, 'VALIDATION_FAILED');
  });

  it('documents the authentication in the OpenAPI document, for register, update and the view', async () => {
    const doc = (await api.get('/openapi.json')).body;
    const schemas = doc.components.schemas;
    const body = (op: { requestBody: { content: Record<string, { schema: unknown }> } }) =>
      JSON.stringify(op.requestBody.content['application/json']!.schema);
    // Request bodies are inlined in the document: both carry the two kinds with every field.
    for (const kinds of [body(doc.paths[base].post), body(doc.paths[`${base}/{id}`].patch)])
      for (const name of [
        '"mtls"',
        '"oauth2_client_credentials"',
        'clientCertificate',
        'clientKey',
        'caCertificate',
        'tokenUrl',
        'clientId',
        'clientSecret',
        'scope',
      ])
        expect(kinds).toContain(name);
    expect(JSON.stringify(schemas.WebhookEndpoint.properties.authentication)).toContain(
      'WebhookEndpointAuthentication',
    );
    expect(JSON.stringify(schemas.WebhookEndpointAuthentication)).not.toMatch(/clientKey|clientSecret|client_secret/);
  });
});
