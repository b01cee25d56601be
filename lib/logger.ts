import pino from 'pino';

/**
 * The one logger. JSON lines; anything that looks like a credential is redacted at the
 * source so a secret can never reach a log line by accident.
 */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'tranche' },
  redact: {
    paths: [
      'authorization',
      '*.authorization',
      'req.headers.authorization',
      'req.headers["x-api-key"]',
      '*.signing_secret',
      '*.signingSecret',
      '*.token',
      '*.password',
      '*.secret',
    ],
    censor: '[redacted]',
  },
});

type Logger = typeof logger;
