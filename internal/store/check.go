package store

// The stored data `wikid check` reads, in every backend's terms.

// CheckTitle is a page's title as stored, for a consistency check.
type CheckTitle struct {
	PageID  int64
	Title   string // as stored, possibly no longer a valid wiki.Title
	NS      string // the pages.ns column
	Deleted bool
}

// CheckUser is a user's name as stored, for a consistency check.
type CheckUser struct {
	ID       int64
	Name     string // as stored, possibly no longer a valid user name
	Skeleton string // the users.skeleton column
}

// Inconsistency is a row that breaks a structural invariant of the store.
type Inconsistency struct {
	PageID  int64  // the page concerned, or 0
	Title   string // its title, when the page exists
	RevID   int64  // the revision concerned, or 0
	Problem string // what is wrong, in a sentence fragment
}

// StructuralChecks are joins that each return the rows breaking one
// invariant, as (page id, title, revision id, problem). Each is one pass
// over a table with primary-key lookups on the other; none reads text. The SQL runs on every backend.
var StructuralChecks = []string{
	// A page's latest revision exists and is one of its own.
	`SELECT p.id, p.title, p.latest_rev, 'its latest revision ' || p.latest_rev || ' does not exist'
	   FROM pages p LEFT JOIN revisions r ON r.id = p.latest_rev WHERE r.id IS NULL`,
	`SELECT p.id, p.title, p.latest_rev, 'its latest revision ' || p.latest_rev || ' belongs to page ' || r.page_id
	   FROM pages p JOIN revisions r ON r.id = p.latest_rev WHERE r.page_id <> p.id`,
	// A revision's page exists.
	`SELECT r.page_id, '', r.id, 'revision ' || r.id || ' belongs to page ' || r.page_id || ', which does not exist'
	   FROM revisions r LEFT JOIN pages p ON p.id = r.page_id WHERE p.id IS NULL`,
	// A revision's author exists (accounts are never deleted; 0 is the maintenance script or an anonymous editor).
	`SELECT r.page_id, coalesce(p.title, ''), r.id, 'revision ' || r.id || ' is by user id ' || r.user_id || ' (' || r.user_name || '), which does not exist'
	   FROM revisions r LEFT JOIN users u ON u.id = r.user_id LEFT JOIN pages p ON p.id = r.page_id
	  WHERE r.user_id <> 0 AND u.id IS NULL`,
	// A blob's chunks hold its bytes: as many as its size, in chunks
	// numbered from 0 without a gap. Chunks are measured, not read
	// (length() of a large value reads its header).
	`SELECT 0, '', 0, 'blob ' || b.sha256 || CASE WHEN coalesce(c.bytes, 0) <> b.size
	        THEN ' holds ' || coalesce(c.bytes, 0) || ' bytes in its chunks, not its size, ' || b.size
	        ELSE ' lacks a chunk: its ' || c.chunks || ' chunks are numbered up to ' || c.last END
	   FROM blobs b LEFT JOIN (SELECT sha256, sum(length(data)) AS bytes, count(*) AS chunks, max(n) AS last
	   FROM blob_chunks GROUP BY sha256) c ON c.sha256 = b.sha256
	  WHERE coalesce(c.bytes, 0) <> b.size OR c.last + 1 <> c.chunks`,
}
