package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/wiki"
)

const insertLogSQL = `INSERT INTO log (type, action, ts, user_id, user_name, target, page_id, comment, params)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)`

// logArgs returns the arguments of insertLogSQL for e; its params go as a
// JSON object of strings ({} when it has none).
func logArgs(e wiki.LogEntry) ([]any, error) {
	params := "{}"
	if len(e.Params) > 0 {
		b, err := json.Marshal(e.Params)
		if err != nil {
			return nil, fmt.Errorf("log params: %w", err)
		}
		params = string(b)
	}
	return []any{string(e.Type), e.Action, ms(now(e.Time)), e.UserID, e.UserName, string(e.Target), e.PageID, e.Comment, params}, nil
}

// insertLog writes e in tx, the transaction of the action it records.
func insertLog(ctx context.Context, tx pgx.Tx, e wiki.LogEntry) error {
	args, err := logArgs(e)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, insertLogSQL, args...)
	return err
}

// queueLog queues the writing of e on b, a batch of the action's
// transaction.
func queueLog(b *pgx.Batch, e wiki.LogEntry) error {
	args, err := logArgs(e)
	if err != nil {
		return err
	}
	b.Queue(insertLogSQL, args...)
	return nil
}

// Log lists log entries matching q, newest first. Each filter has an index
// that starts with it and ends with id, so a page of entries reads only
// the rows it returns.
func (db *DB) Log(ctx context.Context, q wiki.LogQuery) ([]wiki.LogEntry, error) {
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, cond+" $"+strconv.Itoa(len(args)))
	}
	if q.Type != "" {
		arg("type =", string(q.Type))
	}
	if q.UserName != "" {
		arg("user_name =", q.UserName)
	}
	if q.Target != "" {
		arg("target =", string(q.Target))
	}
	if q.Before > 0 {
		arg("id <", q.Before)
	}
	query := `SELECT id, type, action, ts, user_id, user_name, target, page_id, comment, params FROM log`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, limit(q.Limit))
	query += ` ORDER BY id DESC LIMIT $` + strconv.Itoa(len(args))
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: log: %w", err)
	}
	defer rows.Close()
	var out []wiki.LogEntry
	for rows.Next() {
		var e wiki.LogEntry
		var typ, target string
		var params []byte
		var ts int64
		if err := rows.Scan(&e.ID, &typ, &e.Action, &ts, &e.UserID, &e.UserName, &target, &e.PageID, &e.Comment, &params); err != nil {
			return nil, fmt.Errorf("postgres: log: %w", err)
		}
		e.Type, e.Target, e.Time = wiki.LogType(typ), wiki.Title(target), fromMS(ts)
		if err := json.Unmarshal(params, &e.Params); err != nil {
			return nil, fmt.Errorf("postgres: log entry %d: params: %w", e.ID, err)
		}
		if len(e.Params) == 0 {
			e.Params = nil
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: log: %w", err)
	}
	return out, nil
}
