package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/wiki"
)

// AddNotifications implements wiki.NotificationStore.
func (db *DB) AddNotifications(ctx context.Context, ns []wiki.Notification) error {
	err := db.write(ctx, func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, n := range ns {
			b.Queue(`INSERT INTO notifications (user_id, kind, title, rev_id, agent, ts) VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (user_id, kind, title, rev_id, agent) DO NOTHING`, n.UserID, n.Kind, string(n.Title), n.RevID, n.Agent, ms(now(n.Time)))
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return fmt.Errorf("postgres: add notifications: %w", err)
	}
	return nil
}

// Notifications implements wiki.NotificationStore.
func (db *DB) Notifications(ctx context.Context, userID, before int64, n int) ([]wiki.Notification, error) {
	if before <= 0 {
		before = noCursor
	}
	rows, err := db.pool.Query(ctx, `SELECT id, kind, title, rev_id, agent, ts, seen FROM notifications
		WHERE user_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`, userID, before, limit(n))
	if err != nil {
		return nil, fmt.Errorf("postgres: notifications: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Notification, error) {
		x := wiki.Notification{UserID: userID}
		var title string
		var ts int64
		err := row.Scan(&x.ID, &x.Kind, &title, &x.RevID, &x.Agent, &ts, &x.Read)
		x.Title, x.Time = wiki.Title(title), fromMS(ts)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: notifications: %w", err)
	}
	return out, nil
}

// CountUnread implements wiki.NotificationStore.
func (db *DB) CountUnread(ctx context.Context, userID int64) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM notifications WHERE user_id = $1 AND NOT seen LIMIT $2) u`,
		userID, wiki.MaxUnread).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: count unread notifications: %w", err)
	}
	return n, nil
}

// MarkNotificationsRead implements wiki.NotificationStore.
func (db *DB) MarkNotificationsRead(ctx context.Context, userID int64) error {
	if _, err := db.pool.Exec(ctx, `UPDATE notifications SET seen = true WHERE user_id = $1 AND NOT seen`, userID); err != nil {
		return fmt.Errorf("postgres: mark notifications read: %w", err)
	}
	return nil
}
