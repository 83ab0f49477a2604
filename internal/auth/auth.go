// Package auth hashes passwords (argon2id), makes random secrets and
// validates user names. It knows nothing about HTTP or storage.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/wikid/wikid/internal/wiki"
)

// argon2id parameters: OWASP's second recommended set (19 MiB, 2 passes).
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
)

// MinPasswordLen is the shortest password accepted.
const MinPasswordLen = 8

// HashPassword returns a PHC-format argon2id hash of password.
func HashPassword(password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("auth: salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches hash, in constant time.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m > 1<<20 || t > 16 || p == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// ValidatePassword says what is wrong with a new password, if anything.
func ValidatePassword(password, retype string) error {
	if utf8.RuneCountInString(password) < MinPasswordLen {
		return wiki.Errorf(wiki.KindInvalid, "the password is too short: use at least %d characters", MinPasswordLen)
	}
	if len(password) > 1024 {
		return wiki.Errorf(wiki.KindInvalid, "the password is too long: use at most 1024 bytes")
	}
	if password != retype {
		return wiki.Errorf(wiki.KindInvalid, "the two passwords differ; type the same password twice")
	}
	return nil
}

// NormalizeUserName validates a user name; it is wiki.ParseUserName, kept
// here for the callers that reach names through this package.
func NormalizeUserName(name string) (string, error) { return wiki.ParseUserName(name) }

// LookupUserName normalizes a name given to find an existing account; it
// is wiki.LookupUserName.
func LookupUserName(name string) (string, error) { return wiki.LookupUserName(name) }

// NewSecret returns n random bytes, base64url-encoded without padding.
func NewSecret(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(errors.New("auth: the system random source failed: " + err.Error()))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashToken returns the storage ID of a session or API token: hex SHA-256.
// Tokens have 256 bits of entropy, so a fast hash is enough.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Equal compares two secrets in constant time.
func Equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
