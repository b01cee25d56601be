import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { StartupError } from './startup-error';
import { stopProcess } from './temporal-dev-server';

export interface RunningGateway {
  /** The public address: https://localhost:<port>. */
  url: string;
  stop(): Promise<void>;
}

/**
 * TLS termination in front of the gateway, as production has it, in one Caddy process: a site that
 * terminates TLS on `port` with Caddy's own local CA (a cloud load balancer's part), passing every
 * request to a plain-HTTP gateway with deploy/gateway/Caddyfile's settings (round robin over the
 * API instances, trusting no proxy before it, so it sets X-Forwarded-Proto to `http` whatever the
 * TLS end said). `npm run cluster` runs it with CLUSTER_TLS=1; test/console/console-tls.test.ts too.
 */
export async function startTlsGateway(opts: {
  caddy: string;
  port: number;
  /** Port of the plain-HTTP gateway behind the TLS end (loopback only). */
  innerPort: number;
  upstreams: number[];
  dataDir: string;
  output: NodeJS.WritableStream;
}): Promise<RunningGateway> {
  mkdirSync(opts.dataDir, { recursive: true });
  const file = join(opts.dataDir, 'Caddyfile');
  writeFileSync(file, caddyfile(opts));
  const logFile = join(opts.dataDir, 'caddy.log');
  const child = spawn(opts.caddy, ['run', '--config', file, '--adapter', 'caddyfile'], {
    // Caddy keeps its local CA and certificates under these; never the user's own folders.
    env: { ...process.env, XDG_DATA_HOME: opts.dataDir, XDG_CONFIG_HOME: opts.dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(opts.output, { end: false });
  child.stderr.pipe(opts.output, { end: false });
  const deadline = Date.now() + 30_000;
  while (!(await listening(opts.port)) || !(await listening(opts.innerPort))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stopProcess(child, 1000);
      throw new StartupError({
        part: `the TLS gateway (Caddy, ports ${opts.port} and ${opts.innerPort})`,
        problem:
          child.exitCode !== null
            ? `Caddy exited during start (code ${child.exitCode})`
            : 'Caddy did not listen within 30 s',
        remedy: `read Caddy's output in the log, and check its config in ${file}`,
        log: logFile,
      });
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url: `https://localhost:${opts.port}`, stop: () => stopProcess(child) };
}

function caddyfile(opts: { port: number; innerPort: number; upstreams: number[]; dataDir: string }): string {
  const upstreams = opts.upstreams.map((p) => `127.0.0.1:${p}`).join(' ');
  return `{
	admin off
	# No redirect server on port 80, and the local CA stays out of the system's trust store.
	auto_https disable_redirects
	skip_install_trust
	# TCP only (no HTTP/3 over UDP): what the tests and a browser here use.
	servers {
		protocols h1 h2
	}
	storage file_system ${join(opts.dataDir, 'caddy')}
	log {
		output file ${join(opts.dataDir, 'caddy.log')}
	}
}

# The TLS end (a load balancer's part in production).
https://localhost:${opts.port} {
	bind 127.0.0.1
	tls internal
	reverse_proxy 127.0.0.1:${opts.innerPort}
}

# The gateway with deploy/gateway/Caddyfile's settings, on loopback (any Host, as the shipped one).
http://:${opts.innerPort} {
	bind 127.0.0.1
	reverse_proxy ${upstreams} {
		lb_policy round_robin
		fail_duration 30s
		unhealthy_status 502
		lb_try_duration 5s
		transport http {
			dial_timeout 2s
			response_header_timeout 60s
		}
	}
}
`;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
