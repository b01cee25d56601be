/**
 * The one error hierarchy. Every error a caller can see is an AppError with a stable
 * machine-readable code; the API turns it into the one error envelope
 * `{ success: false, error: { code, message, details } }`.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (code: string, message: string, details?: unknown) =>
  new AppError(400, code, message, details);
export const validationFailed = (details: unknown) =>
  new AppError(422, 'VALIDATION_FAILED', 'The request is not valid', details);
export const unauthenticated = (message = 'A valid access token is required', code = 'UNAUTHENTICATED') =>
  new AppError(401, code, message);
export const forbidden = (message = 'You may not do this', code = 'FORBIDDEN') => new AppError(403, code, message);
export const kycRequired = () =>
  new AppError(403, 'KYC_REQUIRED', 'An approved KYC verification for this organisation is required');
export const notFound = (what: string) => new AppError(404, 'NOT_FOUND', `${what} not found`);
export const conflict = (code: string, message: string, details?: unknown) => new AppError(409, code, message, details);
export const rateLimited = (retryAfterSeconds: number) =>
  new AppError(429, 'RATE_LIMITED', 'Too many requests', { retry_after_seconds: retryAfterSeconds });
export const unavailable = (message: string) => new AppError(503, 'UNAVAILABLE', message);

/** What the service cannot work without; an outage of either is a 503, never a 500. */
export type Dependency = 'database' | 'temporal';
const DEPENDENCY_NAMES: Record<Dependency, string> = { database: 'PostgreSQL', temporal: 'Temporal' };
/** Seconds a caller should wait before trying again while a dependency is down. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;
export const dependencyUnavailable = (down: Dependency[]) =>
  new AppError(
    503,
    'SERVICE_UNAVAILABLE',
    `${down.map((d) => DEPENDENCY_NAMES[d]).join(' and ')} cannot be reached; try again shortly`,
    { dependency: down[0], down, retry_after_seconds: OUTAGE_RETRY_AFTER_SECONDS },
  );
export const dependencyName = (d: Dependency) => DEPENDENCY_NAMES[d];
