package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// insertLog writes e in tx, the transaction of the action it records.
func insertLog(ctx context.Context, tx *wtx, e wiki.LogEntry) error {
	params := []byte("{}")
	if len(e.Params) > 0 {
		var err error
		if params, err = json.Marshal(e.Params); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO log (type, action, ts, user_id, user_name, target, page_id, comment, params)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(e.Type), e.Action, ms(now(e.Time)), e.UserID, e.UserName, string(e.Target), e.PageID, e.Comment, string(params))
	return err
}

// Log lists log entries matching q, newest first. Each filter has an index
// that starts with it and ends with id, so a page of entries reads only
// the rows it returns.
func (db *DB) Log(ctx context.Context, q wiki.LogQuery) ([]wiki.LogEntry, error) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	var where []string
	var args []any
	if q.Type != "" {
		where, args = append(where, "type = ?"), append(args, string(q.Type))
	}
	if q.UserName != "" {
		where, args = append(where, "user_name = ?"), append(args, q.UserName)
	}
	if q.Target != "" {
		where, args = append(where, "target = ?"), append(args, string(q.Target))
	}
	where, args = append(where, "id < ?"), append(args, before, limit(q.Limit))
	rows, err := db.r.QueryContext(ctx, `SELECT id, type, action, ts, user_id, user_name, target, page_id, comment, params
		FROM log WHERE `+strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: log: %w", err)
	}
	defer rows.Close()
	var out []wiki.LogEntry
	for rows.Next() {
		var e wiki.LogEntry
		var typ, target, params string
		var ts int64
		if err := rows.Scan(&e.ID, &typ, &e.Action, &ts, &e.UserID, &e.UserName, &target, &e.PageID, &e.Comment, &params); err != nil {
			return nil, fmt.Errorf("sqlite: log: %w", err)
		}
		e.Type, e.Target, e.Time = wiki.LogType(typ), wiki.Title(target), fromMS(ts)
		if params != "{}" {
			if err := json.Unmarshal([]byte(params), &e.Params); err != nil {
				return nil, fmt.Errorf("sqlite: log entry %d: params: %w", e.ID, err)
			}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: log: %w", err)
	}
	return out, nil
}
