// Package session holds what keeps logins safe: sessions, CSRF tokens,
// login throttling and API tokens. It knows nothing about HTTP routing or
// storage engines.
package session
