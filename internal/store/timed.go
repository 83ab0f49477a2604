// Generated from the methods of wiki.Store; keep in step with internal/wiki/store.go.

package store

import (
	"context"
	"io"
	"time"

	"github.com/wikid/wikid/internal/timing"
	"github.com/wikid/wikid/internal/wiki"
)

// Timed wraps a store so that the time of every call is added to the
// request's Server-Timing "db" entry.
type Timed struct{ wiki.Store }

func since(ctx context.Context, t0 time.Time) { timing.From(ctx).AddDB(time.Since(t0)) }

func (st Timed) FindPage(ctx context.Context, t wiki.Title) (wiki.Page, error) {
	defer since(ctx, time.Now())
	return st.Store.FindPage(ctx, t)
}

func (st Timed) FindRevision(ctx context.Context, id int64) (wiki.Revision, error) {
	defer since(ctx, time.Now())
	return st.Store.FindRevision(ctx, id)
}

func (st Timed) ExistingTitles(ctx context.Context, titles []wiki.Title) (map[wiki.Title]bool, error) {
	defer since(ctx, time.Now())
	return st.Store.ExistingTitles(ctx, titles)
}

func (st Timed) SavePage(ctx context.Context, req wiki.SaveRequest) (wiki.SaveResult, error) {
	defer since(ctx, time.Now())
	return st.Store.SavePage(ctx, req)
}

func (st Timed) ImportPages(ctx context.Context, reqs []wiki.SaveRequest) ([]wiki.SaveResult, error) {
	defer since(ctx, time.Now())
	return st.Store.ImportPages(ctx, reqs)
}

func (st Timed) SearchTitles(ctx context.Context, prefix string, limit int) ([]wiki.Page, error) {
	defer since(ctx, time.Now())
	return st.Store.SearchTitles(ctx, prefix, limit)
}

func (st Timed) MovePage(ctx context.Context, req wiki.MoveRequest) (wiki.Page, error) {
	defer since(ctx, time.Now())
	return st.Store.MovePage(ctx, req)
}

func (st Timed) DeletePage(ctx context.Context, t wiki.Title, userID int64, userName, reason string, at time.Time, jobs ...wiki.JobSpec) error {
	defer since(ctx, time.Now())
	return st.Store.DeletePage(ctx, t, userID, userName, reason, at, jobs...)
}

func (st Timed) UndeletePage(ctx context.Context, t wiki.Title, userID int64, userName, reason string, at time.Time, jobs ...wiki.JobSpec) (wiki.Page, error) {
	defer since(ctx, time.Now())
	return st.Store.UndeletePage(ctx, t, userID, userName, reason, at, jobs...)
}

// The job queue's methods are promoted untimed: workers call them outside
// any request.

func (st Timed) History(ctx context.Context, q wiki.HistoryQuery) ([]wiki.Revision, error) {
	defer since(ctx, time.Now())
	return st.Store.History(ctx, q)
}

func (st Timed) PageStats(ctx context.Context, pageID int64, t wiki.Title) (wiki.PageStats, error) {
	defer since(ctx, time.Now())
	return st.Store.PageStats(ctx, pageID, t)
}

func (st Timed) LatestRevisions(ctx context.Context, pageIDs []int64) (map[int64]int64, error) {
	defer since(ctx, time.Now())
	return st.Store.LatestRevisions(ctx, pageIDs)
}

func (st Timed) RecentChanges(ctx context.Context, q wiki.ChangeQuery) ([]wiki.Change, error) {
	defer since(ctx, time.Now())
	return st.Store.RecentChanges(ctx, q)
}

func (st Timed) FindProtection(ctx context.Context, t wiki.Title) (wiki.Protection, error) {
	defer since(ctx, time.Now())
	return st.Store.FindProtection(ctx, t)
}

func (st Timed) ProtectPage(ctx context.Context, req wiki.ProtectRequest) (string, error) {
	defer since(ctx, time.Now())
	return st.Store.ProtectPage(ctx, req)
}

func (st Timed) Log(ctx context.Context, q wiki.LogQuery) ([]wiki.LogEntry, error) {
	defer since(ctx, time.Now())
	return st.Store.Log(ctx, q)
}

func (st Timed) AllPages(ctx context.Context, q wiki.ListQuery) ([]wiki.Page, error) {
	defer since(ctx, time.Now())
	return st.Store.AllPages(ctx, q)
}

func (st Timed) Backlinks(ctx context.Context, t wiki.Title, q wiki.ListQuery) ([]wiki.Page, error) {
	defer since(ctx, time.Now())
	return st.Store.Backlinks(ctx, t, q)
}

func (st Timed) CategoryMembers(ctx context.Context, cat wiki.Title, q wiki.CategoryQuery) ([]wiki.CategoryMember, error) {
	defer since(ctx, time.Now())
	return st.Store.CategoryMembers(ctx, cat, q)
}

func (st Timed) CategoryAdditions(ctx context.Context, cat wiki.Title, limit int) ([]wiki.CategoryMember, error) {
	defer since(ctx, time.Now())
	return st.Store.CategoryAdditions(ctx, cat, limit)
}

func (st Timed) FindRevisions(ctx context.Context, ids []int64) ([]wiki.Revision, error) {
	defer since(ctx, time.Now())
	return st.Store.FindRevisions(ctx, ids)
}

func (st Timed) PageCategories(ctx context.Context, pageID int64) ([]wiki.CategoryLink, error) {
	defer since(ctx, time.Now())
	return st.Store.PageCategories(ctx, pageID)
}

func (st Timed) Search(ctx context.Context, q wiki.SearchQuery) ([]wiki.SearchHit, error) {
	defer since(ctx, time.Now())
	return st.Store.Search(ctx, q)
}

func (st Timed) RandomPage(ctx context.Context) (wiki.Title, error) {
	defer since(ctx, time.Now())
	return st.Store.RandomPage(ctx)
}

func (st Timed) PageCount(ctx context.Context) (int, error) {
	defer since(ctx, time.Now())
	return st.Store.PageCount(ctx)
}

func (st Timed) CreateUser(ctx context.Context, u wiki.User) (wiki.User, error) {
	defer since(ctx, time.Now())
	return st.Store.CreateUser(ctx, u)
}

func (st Timed) FindUser(ctx context.Context, id int64) (wiki.User, error) {
	defer since(ctx, time.Now())
	return st.Store.FindUser(ctx, id)
}

func (st Timed) FindUserByName(ctx context.Context, name string) (wiki.User, error) {
	defer since(ctx, time.Now())
	return st.Store.FindUserByName(ctx, name)
}

func (st Timed) UpdateUser(ctx context.Context, u wiki.User) error {
	defer since(ctx, time.Now())
	return st.Store.UpdateUser(ctx, u)
}

func (st Timed) CountUsers(ctx context.Context) (int, error) {
	defer since(ctx, time.Now())
	return st.Store.CountUsers(ctx)
}

func (st Timed) CreateSession(ctx context.Context, s wiki.Session) error {
	defer since(ctx, time.Now())
	return st.Store.CreateSession(ctx, s)
}

func (st Timed) FindSession(ctx context.Context, id string) (wiki.Session, error) {
	defer since(ctx, time.Now())
	return st.Store.FindSession(ctx, id)
}

func (st Timed) DeleteSession(ctx context.Context, id string) error {
	defer since(ctx, time.Now())
	return st.Store.DeleteSession(ctx, id)
}

func (st Timed) DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error) {
	defer since(ctx, time.Now())
	return st.Store.DeleteExpiredSessions(ctx, now)
}

func (st Timed) CreateToken(ctx context.Context, t wiki.Token) error {
	defer since(ctx, time.Now())
	return st.Store.CreateToken(ctx, t)
}

func (st Timed) FindToken(ctx context.Context, id string) (wiki.Token, error) {
	defer since(ctx, time.Now())
	return st.Store.FindToken(ctx, id)
}

func (st Timed) ListUsers(ctx context.Context, q wiki.UserQuery) ([]wiki.User, error) {
	defer since(ctx, time.Now())
	return st.Store.ListUsers(ctx, q)
}

func (st Timed) SetUserGroup(ctx context.Context, c wiki.GroupChange) (wiki.Group, error) {
	defer since(ctx, time.Now())
	return st.Store.SetUserGroup(ctx, c)
}

func (st Timed) SetPassword(ctx context.Context, userID int64, hash, keepSession string) error {
	defer since(ctx, time.Now())
	return st.Store.SetPassword(ctx, userID, hash, keepSession)
}

func (st Timed) UpdatePrefs(ctx context.Context, userID int64, p wiki.Prefs) error {
	defer since(ctx, time.Now())
	return st.Store.UpdatePrefs(ctx, userID, p)
}

func (st Timed) BlockUser(ctx context.Context, b wiki.Block) (bool, error) {
	defer since(ctx, time.Now())
	return st.Store.BlockUser(ctx, b)
}

func (st Timed) UnblockUser(ctx context.Context, userID int64, by wiki.Actor, reason string, at time.Time) error {
	defer since(ctx, time.Now())
	return st.Store.UnblockUser(ctx, userID, by, reason, at)
}

func (st Timed) FindBlock(ctx context.Context, userID int64, at time.Time) (wiki.Block, error) {
	defer since(ctx, time.Now())
	return st.Store.FindBlock(ctx, userID, at)
}

func (st Timed) ListBlocks(ctx context.Context, q wiki.BlockQuery) ([]wiki.Block, error) {
	defer since(ctx, time.Now())
	return st.Store.ListBlocks(ctx, q)
}

func (st Timed) ListSessions(ctx context.Context, userID int64, at time.Time) ([]wiki.Session, error) {
	defer since(ctx, time.Now())
	return st.Store.ListSessions(ctx, userID, at)
}

func (st Timed) DeleteUserSessions(ctx context.Context, userID int64, except string) (int, error) {
	defer since(ctx, time.Now())
	return st.Store.DeleteUserSessions(ctx, userID, except)
}

func (st Timed) ListTokens(ctx context.Context, userID int64) ([]wiki.Token, error) {
	defer since(ctx, time.Now())
	return st.Store.ListTokens(ctx, userID)
}

func (st Timed) DeleteToken(ctx context.Context, id string) error {
	defer since(ctx, time.Now())
	return st.Store.DeleteToken(ctx, id)
}

func (st Timed) DeleteUserTokens(ctx context.Context, userID int64) (int, error) {
	defer since(ctx, time.Now())
	return st.Store.DeleteUserTokens(ctx, userID)
}

func (st Timed) TouchToken(ctx context.Context, id string, at time.Time) error {
	defer since(ctx, time.Now())
	return st.Store.TouchToken(ctx, id, at)
}

func (st Timed) CreatePasswordReset(ctx context.Context, pr wiki.PasswordReset) error {
	defer since(ctx, time.Now())
	return st.Store.CreatePasswordReset(ctx, pr)
}

func (st Timed) FindPasswordReset(ctx context.Context, id string, at time.Time) (wiki.PasswordReset, error) {
	defer since(ctx, time.Now())
	return st.Store.FindPasswordReset(ctx, id, at)
}

func (st Timed) ResetPassword(ctx context.Context, id, hash string, at time.Time) (wiki.User, error) {
	defer since(ctx, time.Now())
	return st.Store.ResetPassword(ctx, id, hash, at)
}

func (st Timed) FindRender(ctx context.Context, revID int64, version int) ([]byte, error) {
	defer since(ctx, time.Now())
	return st.Store.FindRender(ctx, revID, version)
}

func (st Timed) SaveRender(ctx context.Context, revID int64, version int, data []byte) error {
	defer since(ctx, time.Now())
	return st.Store.SaveRender(ctx, revID, version, data)
}

func (st Timed) DeleteRenders(ctx context.Context, pageIDs []int64) error {
	defer since(ctx, time.Now())
	return st.Store.DeleteRenders(ctx, pageIDs)
}

func (st Timed) FindPageByID(ctx context.Context, id int64) (wiki.Page, error) {
	defer since(ctx, time.Now())
	return st.Store.FindPageByID(ctx, id)
}

func (st Timed) AppendPurges(ctx context.Context, events []wiki.PurgeEvent) error {
	defer since(ctx, time.Now())
	return st.Store.AppendPurges(ctx, events)
}

func (st Timed) PurgesAfter(ctx context.Context, after int64, limit int) ([]wiki.PurgeEvent, error) {
	defer since(ctx, time.Now())
	return st.Store.PurgesAfter(ctx, after, limit)
}

func (st Timed) LastPurge(ctx context.Context) (int64, error) {
	defer since(ctx, time.Now())
	return st.Store.LastPurge(ctx)
}

func (st Timed) TrimPurges(ctx context.Context, before time.Time) (int, error) {
	defer since(ctx, time.Now())
	return st.Store.TrimPurges(ctx, before)
}

func (st Timed) Watchlist(ctx context.Context, userID int64, from wiki.Title, limit int, now time.Time) ([]wiki.Watch, error) {
	defer since(ctx, time.Now())
	return st.Store.Watchlist(ctx, userID, from, limit, now)
}

func (st Timed) WatchedChanges(ctx context.Context, userID int64, q wiki.ChangeQuery, now time.Time) ([]wiki.Change, error) {
	defer since(ctx, time.Now())
	return st.Store.WatchedChanges(ctx, userID, q, now)
}

func (st Timed) WatchTitles(ctx context.Context, userID int64, titles []wiki.Title, expires, now time.Time) error {
	defer since(ctx, time.Now())
	return st.Store.WatchTitles(ctx, userID, titles, expires, now)
}

func (st Timed) UnwatchTitles(ctx context.Context, userID int64, titles []wiki.Title) error {
	defer since(ctx, time.Now())
	return st.Store.UnwatchTitles(ctx, userID, titles)
}

func (st Timed) PutBlob(ctx context.Context, sha string, size int64, r io.Reader) error {
	defer since(ctx, time.Now())
	return st.Store.PutBlob(ctx, sha, size, r)
}

// OpenBlob times the opening only: the blob's reads go on after the
// response's headers, Server-Timing among them, are sent.
func (st Timed) OpenBlob(ctx context.Context, sha string) (wiki.Blob, error) {
	defer since(ctx, time.Now())
	return st.Store.OpenBlob(ctx, sha)
}

func (st Timed) SaveFile(ctx context.Context, req wiki.UploadRequest) (wiki.SaveResult, wiki.FileVersion, error) {
	defer since(ctx, time.Now())
	return st.Store.SaveFile(ctx, req)
}

func (st Timed) CurrentFiles(ctx context.Context, titles []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
	defer since(ctx, time.Now())
	return st.Store.CurrentFiles(ctx, titles)
}

func (st Timed) FileVersions(ctx context.Context, t wiki.Title) ([]wiki.FileVersion, error) {
	defer since(ctx, time.Now())
	return st.Store.FileVersions(ctx, t)
}

func (st Timed) FindFileVersion(ctx context.Context, t wiki.Title, sha string) (wiki.FileVersion, bool, error) {
	defer since(ctx, time.Now())
	return st.Store.FindFileVersion(ctx, t, sha)
}

func (st Timed) FileUsage(ctx context.Context, t wiki.Title, q wiki.ListQuery) ([]wiki.Page, error) {
	defer since(ctx, time.Now())
	return st.Store.FileUsage(ctx, t, q)
}

func (st Timed) FindThumbnail(ctx context.Context, source string, width int) (wiki.Thumbnail, error) {
	defer since(ctx, time.Now())
	return st.Store.FindThumbnail(ctx, source, width)
}

func (st Timed) SaveThumbnail(ctx context.Context, th wiki.Thumbnail) error {
	defer since(ctx, time.Now())
	return st.Store.SaveThumbnail(ctx, th)
}
