# Several Wikid nodes behind one Varnish. deploy/varnish/wikid.vcl stays as
# it is but for its backend line, which becomes
#
#     include "/etc/varnish/wikid-nodes.vcl";
#
# so that this file's backends use wikid.vcl's health probe, and its
# vcl_recv, which Varnish runs before wikid.vcl's, picks the node.

import directors;

# >>> EDIT THESE LINES: one per node, its host and port (its "addr"). <<<
backend node_a { .host = "10.0.0.11"; .port = "8080"; .probe = wikid_healthz; }
backend node_b { .host = "10.0.0.12"; .port = "8080"; .probe = wikid_healthz; }

# Requests go to the healthy nodes in turn: a node keeps nothing a reader
# needs (sessions, pages and jobs are in PostgreSQL), so any node answers
# any request, logged in or not.
sub vcl_init {
	new wikid_nodes = directors.round_robin();
	wikid_nodes.add_backend(node_a);
	wikid_nodes.add_backend(node_b);
}

sub vcl_recv {
	set req.backend_hint = wikid_nodes.backend();
}
