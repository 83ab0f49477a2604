// Package httpx is the HTTP plumbing every handler shares: the one request
// parse and the one response builder.
//
// # One parse, one key
//
// A request is parsed once, by its route's Spec, into a Request: the
// canonical path and the canonical parameters (only those the route reads,
// each once, typed and normalized, sorted by name, encoded one way). The
// edge cache key is Request.Key, derived from that value alone, and handlers
// read parameters only from it. A request whose target as sent differs from
// its key is never served from or stored in the edge cache: a GET or HEAD is
// redirected (301) to the key's URL, and anything else is answered uncached.
// So the edge stores a response only under the exact target that produced
// it, and a fast path can look entries up by the raw request target.
//
// # One response path
//
// Write is the only place that sets status, Cache-Control, Vary, ETag and
// Last-Modified, answers If-None-Match/If-Modified-Since with 304, drops the
// body of HEAD, and compresses: every wiki view, special page, REST answer,
// asset and macro document goes through it. Each content coding has its own
// strong validator (VariantETag); the edge cache applies the same rule to the
// variants it stores.
package httpx
