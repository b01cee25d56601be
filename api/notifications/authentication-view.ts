import { X509Certificate } from 'node:crypto';
import type { EndpointAuthentication } from '../../webhooks';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A certificate as the endpoint view shows it: who, by whom, how long, which. */
function summary(c: X509Certificate) {
  return {
    subject: c.subject.replace(/\n/g, ', '),
    issuer: c.issuer.replace(/\n/g, ', '),
    valid_from: new Date(c.validFrom).toISOString(),
    valid_to: new Date(c.validTo).toISOString(),
    fingerprint_sha256: c.fingerprint256,
  };
}

const summaries = (pem: string) => (pem.match(PEM_CERTIFICATE) ?? []).map((b) => summary(new X509Certificate(b)));

/** What the endpoint shows of its authentication: never the client key or client secret. */
export function authenticationView(a: EndpointAuthentication | null) {
  if (a === null) return null;
  if (a.type === 'oauth2_client_credentials')
    return { type: a.type, token_url: a.token_url, client_id: a.client_id, scope: a.scope };
  return {
    type: a.type,
    client_certificate: summaries(a.client_certificate)[0]!,
    ca_certificates: a.ca_certificate === null ? null : summaries(a.ca_certificate),
  };
}
