vcl 4.1;

# Varnish 7 in front of Wikid. Wikid states the cacheability of every
# response (public with s-maxage for anonymous readers, private for logged-in
# views, no-store for forms and operator endpoints) and purges what a change
# makes stale by surrogate key; this VCL keys, stores and bans by those rules
# and adds nothing of its own. See README.md beside it.

import std;

# Wikid's /healthz answers 200 while it serves. The backend starts healthy
# (.initial = .threshold) so that a restart of Varnish does not answer 503
# for the first probes; three failures out of five make it sick.
probe wikid_healthz {
	.url = "/healthz";
	.interval = 2s;
	.timeout = 1s;
	.window = 5;
	.threshold = 3;
	.initial = 3;
}

# >>> EDIT THIS LINE ONLY: Wikid's host and port (its "addr" setting). <<<
backend wikid { .host = "127.0.0.1"; .port = "8080"; .probe = wikid_healthz; }

# Who may PURGE: Wikid's nodes, which send a purge for every change. Loopback
# (Wikid on the same machine) and the private networks (Wikid nodes beside
# Varnish) by default; narrow it to your nodes' addresses where other
# machines share those networks. Clients on the internet never match.
acl wikid_purgers {
	"127.0.0.0"/8;
	"::1";
	"10.0.0.0"/8;
	"172.16.0.0"/12;
	"192.168.0.0"/16;
	"fc00::"/7;
}

sub vcl_recv {
	unset req.http.X-Varnish-Cache; # ours to set, below
	# An absolute-form target (GET http://host/path) becomes origin-form,
	# so that the checks below see the path Wikid will route.
	if (req.url ~ "(?i)^https?://") {
		set req.http.Host = regsub(req.url, "(?i)^https?://([^/?]*).*$", "\1");
		set req.url = regsub(req.url, "(?i)^https?://[^/?]*", "");
		if (req.url !~ "^/") {
			set req.url = "/" + req.url;
		}
	}
	if (req.url !~ "^/") {
		return (synth(400, "Bad Request"));
	}
	call vcl_req_host;

	if (req.method == "PURGE") {
		call wikid_purge;
	}
	if (req.url ~ "^/varnish-health($|\?)") {
		if (std.healthy(req.backend_hint)) {
			return (synth(200, "OK"));
		}
		return (synth(503, "Backend Unhealthy"));
	}
	# Operator endpoints (/metrics, /debug/pprof/) are for the operator's
	# own network, never for clients of the cache: Varnish connects from
	# loopback, which Wikid would otherwise take for a local operator. Wikid's
	# top-level paths are plain ASCII, so a percent-escape in the first
	# segment (/%6Detrics decodes to /metrics) is refused too.
	if (req.url ~ "(?i)^/+(\.+/+)*(metrics|debug)([/?;]|$)" || req.url ~ "^/+[^/?]*%") {
		return (synth(404, "Not Found"));
	}

	# Who the client is comes from X-Forwarded-For, to which Varnish has
	# appended client.ip; Varnish adds nothing to Forwarded or X-Real-IP, so
	# whatever arrives in them was written by the client. (PURGE, above,
	# reads them first: there they mean another proxy forwarded it.)
	unset req.http.Forwarded;
	unset req.http.X-Real-IP;

	# Wikid reads two cookies. wikid_session makes a personal view;
	# wikid_device (a browser that logged in before) matters only to the
	# login form's POST. A GET or HEAD keeps wikid_session alone, so that a
	# reader with only wikid_device, analytics or preference cookies is
	# an anonymous reader: no cookie reaches Wikid, the cache is neither
	# split nor bypassed. Other methods are passed anyway and keep both.
	# The assets under /static/ are the same for everyone, session or not.
	# Files under /media/ are not: a session is passed like a page view,
	# since who may see a file's bytes depends on who asks (a deleted file
	# shows to administrators only, a private wiki's files to members only).
	std.collect(req.http.Cookie, "; ");
	if (req.url ~ "^/static/") {
		unset req.http.Cookie;
	}
	if (req.http.Cookie) {
		set req.http.Cookie = ";" + req.http.Cookie;
		set req.http.Cookie = regsuball(req.http.Cookie, "; +", ";");
		if (req.method == "GET" || req.method == "HEAD") {
			set req.http.Cookie = regsuball(req.http.Cookie, ";(wikid_session=)", "; \1");
		} else {
			set req.http.Cookie = regsuball(req.http.Cookie, ";(wikid_session=|wikid_device=)", "; \1");
		}
		set req.http.Cookie = regsuball(req.http.Cookie, ";[^ ][^;]*", "");
		set req.http.Cookie = regsuball(req.http.Cookie, "^[; ]+|[; ]+$", "");
		if (req.http.Cookie == "") {
			unset req.http.Cookie;
		}
	}
	if (req.method != "GET" && req.method != "HEAD") {
		return (pass);
	}
	# A session or a bearer token: a personal view, never stored, never
	# served from the cache.
	if (req.http.Cookie || req.http.Authorization) {
		return (pass);
	}
	# While Wikid is healthy, serve an expired object for at most 10 s while
	# a background fetch refreshes it; while it is sick, for the object's
	# whole grace.
	if (std.healthy(req.backend_hint)) {
		set req.grace = 10s;
	}
	return (hash);
}

# PURGE from Wikid: "PURGE /" with X-Purge-Keys: k1 k2 … (surrogate keys,
# 16 lower-case hex digits each) bans every object whose Surrogate-Key holds
# one of them; without X-Purge-Keys, the URL itself is purged. The ban reads
# obj.* only, so the ban lurker can apply it in the background.
sub wikid_purge {
	if (client.ip !~ wikid_purgers) {
		return (synth(403, "Forbidden"));
	}
	# Varnish appends client.ip to X-Forwarded-For before vcl_recv: a comma
	# means another proxy forwarded the request (a TLS terminator on this
	# host connects from loopback, on behalf of anyone).
	if (req.http.X-Forwarded-For ~ "," || req.http.Forwarded || req.http.X-Real-IP) {
		return (synth(403, "Forbidden"));
	}
	if (req.http.X-Purge-Keys) {
		if (req.http.X-Purge-Keys !~ "^[0-9a-f]{16}( [0-9a-f]{16})*$") {
			return (synth(400, "Bad X-Purge-Keys"));
		}
		if (std.ban("obj.http.Surrogate-Key ~ (^|\s)(" + regsuball(req.http.X-Purge-Keys, " ", "|") + ")(\s|$)")) {
			return (synth(200, "Banned"));
		}
		return (synth(500, "Ban Failed: " + std.ban_error()));
	}
	return (purge);
}

sub vcl_hit {
	if (obj.ttl > 0s) {
		set req.http.X-Varnish-Cache = "HIT";
	} else {
		set req.http.X-Varnish-Cache = "STALE";
	}
}

sub vcl_miss {
	set req.http.X-Varnish-Cache = "MISS";
}

sub vcl_pass {
	set req.http.X-Varnish-Cache = "PASS";
}

sub vcl_backend_fetch {
	unset bereq.http.X-Varnish-Cache;
}

sub vcl_backend_response {
	# A failed background refresh keeps the stale object being served.
	if (beresp.status >= 500 && bereq.is_bgfetch) {
		return (abandon);
	}
	if (bereq.uncacheable) {
		return (deliver);
	}
	# Wikid states the cacheability of every response it means to share:
	# anything private, no-store, no-cache, setting a cookie, or without
	# Cache-Control (the router's own redirects) is not stored. Such an
	# object only remembers "do not wait for another fetch of this URL"
	# (hit-for-miss), for a few seconds: the next cacheable answer replaces it.
	if (!beresp.http.Cache-Control ||
	    beresp.ttl <= 0s ||
	    beresp.http.Set-Cookie ||
	    beresp.http.Cache-Control ~ "(?i)(private|no-store|no-cache)" ||
	    beresp.http.Vary == "*" ||
	    bereq.url ~ "(?i)^/+(metrics|debug)([/?;]|$)") {
		set beresp.ttl = 5s;
		set beresp.grace = 0s;
		set beresp.uncacheable = true;
		return (deliver);
	}
	# TTL is s-maxage (Varnish's default reading of Cache-Control). Grace
	# serves an expired object while it is refreshed; keep holds it a day
	# more so that the refresh is a conditional GET (If-None-Match) that
	# Wikid answers with 304.
	set beresp.grace = 6h;
	set beresp.keep = 24h;
	return (deliver);
}

sub vcl_backend_error {
	# Wikid unreachable during a background refresh: keep serving the
	# stale object rather than replacing it with an error.
	if (bereq.is_bgfetch) {
		return (abandon);
	}
}

sub vcl_deliver {
	unset resp.http.Surrogate-Key;
	set resp.http.X-Varnish-Cache = req.http.X-Varnish-Cache;
	return (deliver);
}

sub vcl_synth {
	set resp.http.X-Varnish-Cache = "SYNTH";
	set resp.http.Cache-Control = "no-store";
	set resp.http.Content-Type = "text/plain; charset=utf-8";
	set resp.body = "" + resp.status + " " + resp.reason + {"
"};
	return (deliver);
}
