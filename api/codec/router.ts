import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Payload } from '@temporalio/common';
import { forbidden, unauthenticated } from '../../lib/errors';
import { payloadCodecOf } from '../../lib/runtime/payload-codec';
import type { Principal } from '../../domain/principal';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { CodecPayloads } from './schema';

/**
 * The codec server (docs/decisions/0307): the Temporal Web UI and CLI send it sealed payloads and get
 * them back in clear, for the deployment's operators only. Under /console so the console's sign-in
 * cookie (path /console) reaches it from the Web UI with "include cross-origin credentials"; a bearer
 * access token or CODEC_SERVER_TOKEN works too (the CLI's --codec-auth). The process hands in how to
 * read that cookie (`readConsoleSession`): the cookie is the console's, and api/ does not import it.
 */
export function codecRouter(deps: ApiDeps, readConsoleSession: (ctx: Context) => string | null): Router {
  const router = new Router({ prefix: '/console/codec' });
  // Shows what came as it came, an unsealed payload included: it decodes for reading, never applies.
  const codec = payloadCodecOf(deps.config, { forDisplay: true });
  const uiOrigin = new URL(deps.config.TEMPORAL_UI_URL).origin;

  router.use(cors(uiOrigin));
  router.options(['/decode', '/encode'], (ctx) => {
    ctx.status = 204;
  });
  for (const [path, direction] of [
    ['/decode', 'decode'],
    ['/encode', 'encode'],
  ] as const) {
    router.post(
      path,
      operator(deps, readConsoleSession),
      validate(
        {
          body: CodecPayloads,
          summary: `Temporal's remote codec: ${direction}s payloads for the Web UI and CLI (the deployment's operators; answers the codec protocol's body, not the envelope)`,
        },
        async (ctx, { body }) => {
          const payloads = body.payloads.map(fromJson);
          const out = codec ? await codec[direction](payloads) : payloads;
          ctx.body = { payloads: out.map(toJson) };
        },
      ),
    );
  }
  return router;
}

/** The Web UI calls from its own origin, with the console's cookie when asked to include credentials. */
function cors(origin: string) {
  return async (ctx: Context, next: Next) => {
    if (ctx.get('origin') === origin) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'content-type, x-namespace, authorization');
      ctx.set('Vary', 'Origin');
    }
    await next();
  };
}

/**
 * Who may read payloads in clear: an administrator of an organisation in CODEC_SERVER_ORG_IDS (the
 * payloads of every organisation share one namespace, so a tenant's own admin may not), signed in to
 * the console or holding an access token, or the holder of CODEC_SERVER_TOKEN.
 */
function operator(deps: ApiDeps, readConsoleSession: (ctx: Context) => string | null) {
  const { CODEC_SERVER_ORG_IDS: orgs, CODEC_SERVER_TOKEN: token } = deps.config;
  const tokenDigest = token ? digest(token) : undefined;
  return async (ctx: Context, next: Next) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
    if (bearer && tokenDigest && timingSafeEqual(digest(bearer), tokenDigest)) return next();
    const accessToken = bearer ?? readConsoleSession(ctx);
    if (!accessToken) throw unauthenticated('Sign in to the console, or send Authorization: Bearer <token>');
    const principal: Principal = await deps.tokens.verify(accessToken);
    if (!principal.roles.includes('admin') || !orgs.includes(principal.orgId))
      throw forbidden("Reading payloads needs an administrator of the deployment's operators", 'CODEC_FORBIDDEN');
    await next();
  };
}

const digest = (text: string) => createHash('sha256').update(text).digest();

function fromJson(p: CodecPayloads['payloads'][number]): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data ?? '', 'base64'),
  };
}

function toJson(p: Payload): CodecPayloads['payloads'][number] {
  return {
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]),
    ),
    data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
  };
}
