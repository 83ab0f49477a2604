package wiki

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// PurgeEvent is one entry of the purge log: what one process invalidated
// in its own caches, for the other processes on the same database (a
// `wikid jobs run` beside `wikid serve`, or other nodes) to invalidate in
// theirs.
type PurgeEvent struct {
	ID     int64  // assigned by the log: one more than the event before
	Origin string // the process that made it, which skips its own
	// Stale marks a change that only restyles the pages (a link's colour):
	// their responses are dropped, the listings stay.
	Stale   bool
	Titles  []Title // the titles whose responses go; with !Stale, the listings too
	PageIDs []int64 // the pages whose in-memory renders go
	// Users whose accounts changed (group, block, password, sessions
	// ended): their sessions cached in memory go.
	Users []int64
	// Sessions ended (signed out): their copies held in memory go.
	Sessions []string
	Time     time.Time
}

// PurgeStore is the purge log. IDs increase by one per event and trimming
// keeps the newest event, so that a reader that finds the event after its
// last one missing knows it missed some (and drops all it holds).
type PurgeStore interface {
	// AppendPurges adds events to the log in one transaction, assigning
	// their IDs in order.
	AppendPurges(ctx context.Context, events []PurgeEvent) error
	// PurgesAfter returns up to limit events with an ID above after, in ID
	// order.
	PurgesAfter(ctx context.Context, after int64, limit int) ([]PurgeEvent, error)
	// LastPurge returns the newest event's ID (0 when the log is empty):
	// where a process that has just started begins to read.
	LastPurge(ctx context.Context) (int64, error)
	// TrimPurges drops events made before before, except the newest.
	TrimPurges(ctx context.Context, before time.Time) (int, error)
}

// JobPurgeLog is the kind of a change's purge log event carried with its
// jobs (PurgeSpec), not a job: a store appends it to the purge log in the
// change's transaction.
const JobPurgeLog = "purgelog"

// PurgeSpec carries ev with a change's jobs (its outbox), so that the
// event is in the purge log exactly when the change is committed: the other
// processes learn of every committed change, also when the process that
// made it dies right after its commit.
func PurgeSpec(ev PurgeEvent) JobSpec {
	b, _ := json.Marshal(ev) // a struct of strings, numbers and times
	return JobSpec{Kind: JobPurgeLog, Payload: b}
}

// SplitPurges returns the jobs among specs and the purge log events
// (PurgeSpec) among them, in order.
func SplitPurges(specs []JobSpec) ([]JobSpec, []PurgeEvent, error) {
	var jobs []JobSpec
	var events []PurgeEvent
	for _, s := range specs {
		if s.Kind != JobPurgeLog {
			jobs = append(jobs, s)
			continue
		}
		var ev PurgeEvent
		if err := json.Unmarshal(s.Payload, &ev); err != nil {
			return nil, nil, fmt.Errorf("a purge log event: %w", err)
		}
		events = append(events, ev)
	}
	return jobs, events, nil
}
