package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/wiki"
)

// insertLog writes e in tx, the transaction of the action it records.
func insertLog(ctx context.Context, tx pgx.Tx, e wiki.LogEntry) error {
	params := e.Params
	if params == nil {
		params = map[string]string{}
	}
	_, err := tx.Exec(ctx, `INSERT INTO log (type, action, ts, user_id, user_name, target, page_id, comment, params)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		string(e.Type), e.Action, ms(now(e.Time)), e.UserID, e.UserName, string(e.Target), e.PageID, e.Comment, params)
	return err
}
