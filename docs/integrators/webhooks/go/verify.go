// Verifying Tranche webhooks in Go with the standard library only (crypto/hmac, crypto/sha256).
// Both schemes are keyed from the one signing_secret ("whsec_<base64>"); see ../README.md.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// VerifyServiceSignature checks spec §6.4: "sha256=" + hex HMAC-SHA256 of the raw body, keyed
// with the secret string as is.
func VerifyServiceSignature(secret string, rawBody []byte, header string) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(rawBody)
	expected := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(expected), []byte(header))
}

// VerifyStandardWebhook checks Standard Webhooks: "v1,<base64>" entries (two during a rotation),
// each an HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<raw body>" keyed with the
// base64-decoded part after "whsec_". It returns "ok", "bad_signature" or "stale" (a timestamp
// further than the tolerance from now).
func VerifyStandardWebhook(secret string, rawBody []byte, id, timestamp, signature string, now time.Time, tolerance time.Duration) string {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if id == "" || signature == "" || err != nil || ts < 0 {
		return "bad_signature"
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "bad_signature"
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(rawBody)
	expected := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	matches := false
	for _, entry := range strings.Split(signature, " ") {
		version, value, found := strings.Cut(entry, ",")
		if found && version == "v1" && hmac.Equal([]byte(value), []byte(expected)) {
			matches = true
		}
	}
	if !matches {
		return "bad_signature"
	}
	age := now.Sub(time.Unix(ts, 0))
	if age > tolerance || -age > tolerance {
		return "stale"
	}
	return "ok"
}
