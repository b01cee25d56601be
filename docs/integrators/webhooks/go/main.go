// A runnable receiver: WEBHOOK_SECRET=whsec_... SCHEME=spec|standard PORT=8080 go run .
// It verifies every request over the raw bytes, answers 401 to a bad signature or a stale
// timestamp, and processes each event once: a repeat (a retry after a lost answer, or a replay)
// is acknowledged with 200 and not processed again. Keep the "seen" ids in your database.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func main() {
	secret := os.Getenv("WEBHOOK_SECRET")
	scheme := os.Getenv("SCHEME")
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	var mu sync.Mutex
	seen := map[string]bool{}

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		outcome, key := "bad_signature", ""
		if scheme == "standard" {
			outcome = VerifyStandardWebhook(secret, body, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), time.Now(), 5*time.Minute)
			key = r.Header.Get("webhook-id")
		} else if VerifyServiceSignature(secret, body, r.Header.Get("X-Service-Signature")) {
			var envelope struct {
				EventID string `json:"event_id"`
			}
			if json.Unmarshal(body, &envelope) == nil {
				outcome, key = "ok", envelope.EventID // spec §6.1
			}
		}
		if outcome == "ok" {
			mu.Lock()
			if seen[key] {
				outcome = "duplicate"
			} else {
				outcome = "accepted"
				seen[key] = true // process the event here, once
			}
			mu.Unlock()
		}
		status := http.StatusUnauthorized
		if outcome == "accepted" || outcome == "duplicate" {
			status = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"outcome": outcome})
	})

	listener, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("{\"port\": %d}\n", listener.Addr().(*net.TCPAddr).Port)
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
		<-stop
		_ = server.Close()
	}()
	if err := server.Serve(listener); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
