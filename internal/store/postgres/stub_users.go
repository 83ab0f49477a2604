// Placeholders until this part of the store is written: each returns
// errors.ErrUnsupported.
package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

var _ = time.Time{}

func (db *DB) CreateUser(_ context.Context, _ wiki.User) (wiki.User, error) {
	return wiki.User{}, errors.ErrUnsupported
}

func (db *DB) FindUser(_ context.Context, _ int64) (wiki.User, error) {
	return wiki.User{}, errors.ErrUnsupported
}

func (db *DB) FindUserByName(_ context.Context, _ string) (wiki.User, error) {
	return wiki.User{}, errors.ErrUnsupported
}

func (db *DB) UpdateUser(_ context.Context, _ wiki.User) error {
	return errors.ErrUnsupported
}

func (db *DB) CountUsers(_ context.Context) (int, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) ListUsers(_ context.Context, _ wiki.UserQuery) ([]wiki.User, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) SetUserGroup(_ context.Context, _ wiki.GroupChange) (wiki.Group, error) {
	return "", errors.ErrUnsupported
}

func (db *DB) SetPassword(_ context.Context, _ int64, _, _ string) error {
	return errors.ErrUnsupported
}

func (db *DB) UpdatePrefs(_ context.Context, _ int64, _ wiki.Prefs) error {
	return errors.ErrUnsupported
}

func (db *DB) BlockUser(_ context.Context, _ wiki.Block) (bool, error) {
	return false, errors.ErrUnsupported
}

func (db *DB) UnblockUser(_ context.Context, _ int64, _ wiki.Actor, _ string, _ time.Time) error {
	return errors.ErrUnsupported
}

func (db *DB) FindBlock(_ context.Context, _ int64, _ time.Time) (wiki.Block, error) {
	return wiki.Block{}, errors.ErrUnsupported
}

func (db *DB) ListBlocks(_ context.Context, _ wiki.BlockQuery) ([]wiki.Block, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) CreateSession(_ context.Context, _ wiki.Session) error {
	return errors.ErrUnsupported
}

func (db *DB) FindSession(_ context.Context, _ string) (wiki.Session, error) {
	return wiki.Session{}, errors.ErrUnsupported
}

func (db *DB) DeleteSession(_ context.Context, _ string) error {
	return errors.ErrUnsupported
}

func (db *DB) DeleteExpiredSessions(_ context.Context, _ time.Time) (int, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) ListSessions(_ context.Context, _ int64, _ time.Time) ([]wiki.Session, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) DeleteUserSessions(_ context.Context, _ int64, _ string) (int, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) CreateToken(_ context.Context, _ wiki.Token) error {
	return errors.ErrUnsupported
}

func (db *DB) FindToken(_ context.Context, _ string) (wiki.Token, error) {
	return wiki.Token{}, errors.ErrUnsupported
}

func (db *DB) ListTokens(_ context.Context, _ int64) ([]wiki.Token, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) DeleteToken(_ context.Context, _ string) error {
	return errors.ErrUnsupported
}

func (db *DB) DeleteUserTokens(_ context.Context, _ int64) (int, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) TouchToken(_ context.Context, _ string, _ time.Time) error {
	return errors.ErrUnsupported
}

func (db *DB) CreatePasswordReset(_ context.Context, _ wiki.PasswordReset) error {
	return errors.ErrUnsupported
}

func (db *DB) FindPasswordReset(_ context.Context, _ string, _ time.Time) (wiki.PasswordReset, error) {
	return wiki.PasswordReset{}, errors.ErrUnsupported
}

func (db *DB) ResetPassword(_ context.Context, _, _ string, _ time.Time) (wiki.User, error) {
	return wiki.User{}, errors.ErrUnsupported
}
