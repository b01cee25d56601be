"""A runnable receiver: WEBHOOK_SECRET=whsec_... SCHEME=spec|standard PORT=8080 python3 receiver.py

It verifies every request over the raw bytes, answers 401 to a bad signature or a stale
timestamp, and processes each event once: a repeat (a retry after a lost answer, or a replay) is
acknowledged with 200 and not processed again. Keep the "seen" ids in your database.
"""
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verify import verify_service_signature, verify_standard_webhook  # noqa: E402

SECRET = os.environ.get("WEBHOOK_SECRET", "")
SCHEME = "standard" if os.environ.get("SCHEME") == "standard" else "spec"
seen: set[str] = set()
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        key = None
        if SCHEME == "spec":
            outcome = "ok" if verify_service_signature(SECRET, body, self.headers.get("X-Service-Signature")) else "bad_signature"
            if outcome == "ok":
                key = json.loads(body)["event_id"]  # spec §6.1
        else:
            outcome = verify_standard_webhook(SECRET, body, self.headers.get("webhook-id"),
                                              self.headers.get("webhook-timestamp"), self.headers.get("webhook-signature"))
            key = self.headers.get("webhook-id")
        if outcome == "ok":
            with lock:
                outcome = "duplicate" if key in seen else "accepted"
                seen.add(key)  # process the event here, once
        status = 200 if outcome in ("accepted", "duplicate") else 401
        payload = json.dumps({"outcome": outcome}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8080"))), Handler)
signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
print(json.dumps({"port": server.server_address[1]}), flush=True)
server.serve_forever()
