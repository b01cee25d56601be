import type { Context } from 'koa';
import type { ConsoleDeps } from './console-deps';
import { SECRET_FLASH_MS, type consoleCookies } from './session-cookies';

/** What the secret's page needs of the answer that made it. */
interface FlashedSecret {
  signing_secret: string;
  previous_secret_expires_at: string | null;
  rotated: boolean;
}

interface Sealed extends FlashedSecret {
  /** Epoch milliseconds: past it the seal is refused whatever the browser kept. */
  expires_at: number;
}

/**
 * A new signing secret between the POST that made it and the one page that shows it
 * (docs/decisions/0375-console-forms-carry-their-key.md). Never in clear outside that page: sealed
 * (AES-256-GCM under the webhook secret keyring) and bound to the organisation, the person and the
 * endpoint, with its own expiry inside the seal, in a cookie sent only to the secret's page. Shown
 * once: the page that opens it clears it, so a reload (or a copy of the cookie later) shows nothing.
 */
export function secretFlash(
  cookies: ReturnType<typeof consoleCookies>,
  box: ConsoleDeps['secrets'],
  principalOf: (ctx: Context) => { orgId: string; userId: string },
) {
  const scope = (ctx: Context, endpointId: string) => {
    const p = principalOf(ctx);
    return `console-secret:${p.orgId}:${p.userId}:${endpointId}`;
  };
  return {
    put(ctx: Context, endpointId: string, secret: FlashedSecret): void {
      const sealed: Sealed = { ...secret, expires_at: Date.now() + SECRET_FLASH_MS };
      const value = box.seal(scope(ctx, endpointId), JSON.stringify(sealed));
      cookies.writeSecret(ctx, endpointId, Buffer.from(value).toString('base64url'));
    },

    /** The secret, if this person's cookie for this endpoint still holds one in time; null otherwise. */
    open(ctx: Context, endpointId: string): FlashedSecret | null {
      const raw = cookies.readSecret(ctx);
      if (!raw) return null;
      let sealed: Sealed;
      try {
        sealed = JSON.parse(box.open(scope(ctx, endpointId), Buffer.from(raw, 'base64url').toString())) as Sealed;
      } catch {
        return null; // another person's, another endpoint's, altered, or under a key no longer in the ring
      }
      if (!(typeof sealed.expires_at === 'number' && Date.now() < sealed.expires_at)) return null;
      const { expires_at: _expires, ...secret } = sealed;
      return secret;
    },

    /** Shown (or no longer wanted): the browser is told to drop it. */
    clear(ctx: Context, endpointId: string): void {
      cookies.clearSecret(ctx, endpointId);
    },
  };
}
