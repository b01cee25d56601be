import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import type { PreparedAuthentication } from '../../webhooks';
import { AppError, badRequest } from '../../lib/errors';
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
