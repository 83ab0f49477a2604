package session

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"golang.org/x/text/cases"
)

// Device tokens (OWASP's "device cookies"): after a successful login the
// browser gets a token that names the account and is signed with the
// server's secret. A later login attempt at that account carrying it is
// throttled under the token alone (Throttle.BeginDevice), so an attacker
// failing from the owner's address (a shared NAT, an unconfigured proxy)
// never locks the owner out. The token grants nothing else: it is not a
// session and proves nothing but an earlier login at that account from
// this browser.
//
// A token is "NONCE.ACCOUNT.SIG": a random nonce, the case-folded account
// name (base64url), and the first 16 bytes of HMAC-SHA256 over
// "device|NONCE|ACCOUNT" in hex. The nonce makes each browser's token, and
// so its throttle key, its own.

// Devices issues and checks device tokens with one secret.
type Devices struct {
	secret []byte
}

// NewDevices signs device tokens with secret (the server's stable secret).
func NewDevices(secret []byte) Devices { return Devices{secret: secret} }

// Device is a checked device token, for Throttle.BeginDevice. The zero
// Device is none.
type Device struct {
	key string // the throttle key: "d\x00" and the token's signature
}

// Valid reports whether d is a checked token (not the zero Device).
func (d Device) Valid() bool { return d.key != "" }

const (
	deviceNonceLen = 16
	maxDeviceToken = 1024 // longer than any token Issue makes
)

// Issue returns a new device token for account.
func (ds Devices) Issue(account string) string {
	nonce := make([]byte, deviceNonceLen)
	rand.Read(nonce) // never fails (crypto/rand)
	n := base64.RawURLEncoding.EncodeToString(nonce)
	a := base64.RawURLEncoding.EncodeToString([]byte(foldAccount(account)))
	return n + "." + a + "." + ds.sign(n, a)
}

// Check returns the Device of token when it is a token this server issued
// for account (in any letter case), else the zero Device.
func (ds Devices) Check(token, account string) Device {
	if len(token) > maxDeviceToken {
		return Device{}
	}
	n, rest, ok1 := strings.Cut(token, ".")
	a, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || n == "" || a == "" {
		return Device{}
	}
	if !hmac.Equal([]byte(sig), []byte(ds.sign(n, a))) {
		return Device{}
	}
	if !hmac.Equal([]byte(a), []byte(base64.RawURLEncoding.EncodeToString([]byte(foldAccount(account))))) {
		return Device{}
	}
	return Device{key: "d\x00" + sig}
}

func (ds Devices) sign(nonce, account string) string {
	m := hmac.New(sha256.New, ds.secret)
	m.Write([]byte("device|" + nonce + "|" + account))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// foldAccount is an account name as the store compares it (case-folded),
// cut short as the throttle's keys are.
func foldAccount(account string) string {
	acct := cases.Fold().String(account)
	if len(acct) > maxAccountKey {
		acct = acct[:maxAccountKey]
	}
	return acct
}
