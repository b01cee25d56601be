import type Router from '@koa/router';
import { IdentityApiKeySchema } from '../../db/entities/identity-api-key';
import { recordingRefusals, recordSucceeded, transactionOf } from '../audit/audit-recorder';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { answerHoldsSecret } from '../middleware/idempotency';
import { validate } from '../middleware/validate';
import { createApiKey, listApiKeys, revokeApiKey, toApiKeyView } from '../../identity';
import { ok } from '../respond';
import { ApiKeyParams, CreateApiKeyBody, ApiKeyCreated, ApiKeyList } from './schema';

/**
 * An administrator manages their organisation's API keys; the plain key is shown once, on creation
 * (and again only to a retry of that request by the same admin with the same roles).
 */
export function apiKeyRoutes(router: Router, deps: ApiDeps): void {
  const admin = auth(deps.tokens, 'admin');

  router.post(
    '/identity/api-keys',
    admin,
    validate(
      {
        body: CreateApiKeyBody,
        response: ApiKeyCreated,
        status: 201,
        summary: "Issue an API key for the caller's organisation (admin; the key is shown once)",
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const { key, record } = await deps.orm.em.fork().transactional(async (em) => {
          const made = await createApiKey(em, { orgId: p.orgId, name: input.body.name, createdBy: p.userId });
          await recordSucceeded(transactionOf(em), ctx, {
            action: 'api_key.issue',
            subject: { type: 'api_key', id: made.record.id },
            after: { name: made.record.name, last_four: made.record.lastFour },
          });
          return made;
        });
        answerHoldsSecret(ctx);
        ok(ctx, { ...toApiKeyView(record), key }, 201);
      },
    ),
  );

  router.get(
    '/identity/api-keys',
    admin,
    validate(
      { response: ApiKeyList, summary: "List the organisation's API keys, without secrets (admin)" },
      async (ctx) => {
        ok(ctx, (await listApiKeys(deps.orm.em.fork(), ctx.state.principal.orgId)).map(toApiKeyView));
      },
    ),
  );

  router.delete(
    '/identity/api-keys/:key_id',
    admin,
    validate({ params: ApiKeyParams, status: 204, summary: 'Revoke an API key (admin)' }, async (ctx, input) => {
      const subject = { type: 'api_key', id: input.params.key_id };
      await recordingRefusals(deps.orm, ctx, { action: 'api_key.revoke', subject }, () =>
        deps.orm.em.fork().transactional(async (em) => {
          const before = await em.findOne(IdentityApiKeySchema, { id: subject.id, orgId: ctx.state.principal.orgId });
          const revokedBefore = before?.revokedAt?.toISOString() ?? null;
          const key = await revokeApiKey(em, ctx.state.principal.orgId, subject.id);
          await recordSucceeded(transactionOf(em), ctx, {
            action: 'api_key.revoke',
            subject,
            before: { revoked_at: revokedBefore },
            after: { revoked_at: key.revokedAt?.toISOString() ?? null },
          });
        }),
      );
      // Its exchanged tokens stop here at once, elsewhere within TOKEN_REVOCATION_CACHE_SECONDS (decision 0272).
      deps.tokens.forget('key', subject.id);
      ctx.status = 204;
    }),
  );
}
