package sqlite

import (
	"context"
	"fmt"

	"github.com/wikid/wikid/internal/wiki"
)

// AddNotifications implements wiki.NotificationStore.
func (db *DB) AddNotifications(ctx context.Context, ns []wiki.Notification) error {
	err := db.write(ctx, func(tx *wtx) error {
		for _, n := range ns {
			if _, err := tx.ExecContext(ctx, `INSERT INTO notifications (user_id, kind, title, rev_id, agent, ts) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (user_id, kind, title, rev_id, agent) DO NOTHING`, n.UserID, n.Kind, string(n.Title), n.RevID, n.Agent, ms(now(n.Time))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: add notifications: %w", err)
	}
	return nil
}

// Notifications implements wiki.NotificationStore.
func (db *DB) Notifications(ctx context.Context, userID, before int64, n int) ([]wiki.Notification, error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, kind, title, rev_id, agent, ts, seen FROM notifications
		WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?`, userID, before, limit(n))
	if err != nil {
		return nil, fmt.Errorf("sqlite: notifications: %w", err)
	}
	defer rows.Close()
	var out []wiki.Notification
	for rows.Next() {
		x := wiki.Notification{UserID: userID}
		var title string
		var ts int64
		if err := rows.Scan(&x.ID, &x.Kind, &title, &x.RevID, &x.Agent, &ts, &x.Read); err != nil {
			return nil, fmt.Errorf("sqlite: notifications: %w", err)
		}
		x.Title, x.Time = wiki.Title(title), fromMS(ts)
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: notifications: %w", err)
	}
	return out, nil
}

// CountUnread implements wiki.NotificationStore.
func (db *DB) CountUnread(ctx context.Context, userID int64) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM notifications WHERE user_id = ? AND seen = 0 LIMIT ?)`,
		userID, wiki.MaxUnread).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: count unread notifications: %w", err)
	}
	return n, nil
}

// MarkNotificationsRead implements wiki.NotificationStore.
func (db *DB) MarkNotificationsRead(ctx context.Context, userID int64) error {
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `UPDATE notifications SET seen = 1 WHERE user_id = ? AND seen = 0`, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: mark notifications read: %w", err)
	}
	return nil
}
