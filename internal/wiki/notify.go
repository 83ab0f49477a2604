package wiki

import (
	"context"
	"time"
)

// Notification kinds: what a user is told about.
const (
	NotifyTalk    = "talk"    // someone else edited the user's talk page
	NotifyMention = "mention" // someone linked the user's page in a signed comment
	NotifyThank   = "thank"   // someone thanked the user for an edit
)

// MaxMentions bounds the users one edit may notify by mention, as
// MediaWiki's Echo does: past it, none of the mentions is sent.
const MaxMentions = 50

// Notification tells user UserID that Agent changed Title in revision
// RevID (0 when the revision was not found: the page is linked).
type Notification struct {
	ID     int64
	UserID int64
	Kind   string
	Title  Title
	RevID  int64
	Agent  string
	Time   time.Time
	Read   bool
}

// NotificationStore keeps the users' notifications.
type NotificationStore interface {
	// AddNotifications stores notifications; one already stored (same
	// user, kind, title, revision and agent: a job run again, thanks sent
	// twice) is skipped.
	AddNotifications(ctx context.Context, ns []Notification) error
	// Notifications lists the user's notifications newest first, those
	// with an ID below before (0: from the newest), at most limit.
	Notifications(ctx context.Context, userID, before int64, limit int) ([]Notification, error)
	// CountUnread counts the user's unread notifications, up to 100.
	CountUnread(ctx context.Context, userID int64) (int, error)
	// MarkNotificationsRead marks every notification of the user read.
	MarkNotificationsRead(ctx context.Context, userID int64) error
}

// MaxUnread is where CountUnread stops counting ("99+").
const MaxUnread = 100
