import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import type { PreparedAuthentication } from '../../webhooks';
import { AppError, badRequest, validationFailed } from '../../lib/errors';
import { assertDeliverableUrl, SsrfRefusedError, type SsrfPolicy } from '../../lib/runtime/ssrf-guard';
import type { HostResolver } from '../../lib/runtime/dns-resolver';
import type { AuthenticationInput } from './schema';
import { checkHttpsUrl } from './url-policy';

const invalid = (why: string) => badRequest('INVALID_AUTHENTICATION', `Invalid authentication: ${why}`);

/**
 * Checks what an endpoint is given to authenticate with (docs/decisions/0319-authenticated-receivers.md) and
 * answers what to store, or a 400 INVALID_AUTHENTICATION that says what is wrong: a PEM that does not parse,
 * a key that is not the certificate's, an expired certificate, a token URL that is not https or points into
 * our network (the SSRF guard, as for the webhook URL; checked again at every token fetch's connect). Called
 * before any transaction opens: the token URL's DNS lookup must not hold a connection.
 */
export async function prepareAuthentication(
  input: AuthenticationInput,
  opts: { allowInsecureLoopback: boolean; ssrf: SsrfPolicy; resolver: HostResolver },
): Promise<PreparedAuthentication> {
  if (input.type === 'mtls') return prepareMtls(input);
  const tokenUrl = checkHttpsUrl(input.tokenUrl, opts.allowInsecureLoopback, (why) => invalid(`tokenUrl: ${why}`));
  await assertDeliverableUrl(tokenUrl, opts.ssrf, opts.resolver).catch((err: unknown) => {
    // Not resolvable yet is accepted, as for the webhook URL: every token fetch's lookup guards it.
    if (err instanceof AppError && err.code === 'WEBHOOK_URL_UNRESOLVABLE') return;
    if (err instanceof SsrfRefusedError)
      throw invalid(
        `tokenUrl: ${err.host} resolves to a ${err.addressClass} address (${err.address}), which we may not reach`,
      );
    throw err;
  });
  return {
    settings: {
      type: 'oauth2_client_credentials',
      token_url: tokenUrl,
      client_id: input.clientId,
      scope: input.scope ?? null,
    },
    secret: input.clientSecret,
  };
}

function prepareMtls(input: Extract<AuthenticationInput, { type: 'mtls' }>): PreparedAuthentication {
  const chain = certificates(input.clientCertificate, 'clientCertificate');
  const leaf = chain[0]!;
  if (Date.parse(leaf.validTo) <= Date.now())
    throw invalid(`clientCertificate expired on ${new Date(leaf.validTo).toISOString()}`);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: input.clientKey, format: 'pem' });
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw invalid(
      code === 'ERR_MISSING_PASSPHRASE'
        ? 'clientKey is encrypted; give it unencrypted (it is sealed at rest)'
        : 'clientKey is not a PEM private key',
    );
  }
  refuseCostlyKey(key);
  if (!leaf.checkPrivateKey(key))
    throw invalid("clientKey is not the private key of clientCertificate's first certificate");
  const ca = input.caCertificate === undefined ? null : certificates(input.caCertificate, 'caCertificate');
  return {
    settings: {
      type: 'mtls',
      client_certificate: chain.map((c) => c.toString()).join(''),
      ca_certificate: ca && ca.map((c) => c.toString()).join(''),
    },
    secret: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** The client keys we sign TLS handshakes with. */
const ALLOWED_CLIENT_KEYS = 'RSA of 2048 to 4096 bits, EC on P-256 or P-384, or Ed25519';
const CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384' };

/**
 * Every handshake of an mTLS endpoint signs with its client key on the worker's main thread, which every
 * endpoint's deliveries share: an RSA key of 16384 bits costs 0.3-0.5 s of it each time, one of 8192 bits
 * some 140 ms on a loaded host. Only the kinds a TLS stack signs with in a few milliseconds at most are taken
 * (a 422 naming the field and what is allowed; docs/decisions/0378-client-key-kinds.md).
 */
function refuseCostlyKey(key: KeyObject): void {
  const details = key.asymmetricKeyDetails ?? {};
  let kind: string;
  switch (key.asymmetricKeyType) {
    case 'rsa':
      if (details.modulusLength! >= 2048 && details.modulusLength! <= 4096) return;
      kind = `an RSA key of ${details.modulusLength} bits`;
      break;
    case 'ec':
      if (details.namedCurve! in CURVES) return;
      kind = `an EC key on ${details.namedCurve}`;
      break;
    case 'ed25519':
      return;
    default:
      kind = `a key of type ${key.asymmetricKeyType}`;
  }
  throw validationFailed([
    { in: 'body', path: 'authentication.clientKey', message: `is ${kind}; allowed: ${ALLOWED_CLIENT_KEYS}` },
  ]);
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate of a PEM bundle, in order; at least one, each one parsing. */
function certificates(pem: string, field: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw invalid(`${field} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw invalid(`${field}: certificate ${i + 1} does not parse`);
    }
  });
}
