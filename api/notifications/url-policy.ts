import { isIP } from 'node:net';
import { badRequest, type AppError } from '../../lib/errors';

/**
 * spec §4.3 register/update: deliveries go over https; plain http only to loopback and only when
 * WEBHOOK_ALLOW_INSECURE_LOOPBACK is on (local development and tests).
 */
export function checkWebhookUrl(raw: string, allowInsecureLoopback: boolean): string {
  return checkHttpsUrl(raw, allowInsecureLoopback, invalidUrl, 'authenticate by the signature');
}

/**
 * The scheme rule of every URL we send to (a webhook URL, an OAuth2 token URL): https; plain http
 * only to loopback when `allowInsecureLoopback` (development and tests); no credentials in it.
 */
export function checkHttpsUrl(
  raw: string,
  allowInsecureLoopback: boolean,
  invalid: (why: string) => AppError,
  credentialsHint = 'give them as authentication',
): string {
  const url = new URL(raw);
  if (url.username || url.password) throw invalid(`credentials in the URL are not allowed; ${credentialsHint}`);
  if (url.protocol === 'https:') return url.toString();
  if (url.protocol === 'http:' && isLoopback(url.hostname)) {
    if (allowInsecureLoopback) return url.toString();
    throw invalid('plain http is allowed only to loopback in development; use https');
  }
  throw invalid('the URL must use https');
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return isIP(host) === 6 && host === '::1';
}

const invalidUrl = (why: string) => badRequest('INVALID_WEBHOOK_URL', `Invalid webhook url: ${why}`);
