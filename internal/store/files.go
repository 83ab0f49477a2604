package store

import (
	"strconv"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// UploadLog is the upload log entry of req, saved as page pageID at at.
func UploadLog(req wiki.UploadRequest, pageID int64, at time.Time) wiki.LogEntry {
	v := req.Version
	return wiki.LogEntry{
		Type: wiki.LogUpload, Action: req.Action, Time: at, UserID: v.UserID, UserName: v.UserName,
		Target: req.Page.Title, PageID: pageID, Comment: v.Comment,
		Params: map[string]string{"sha256": v.SHA256, "size": strconv.FormatInt(v.Size, 10)},
	}
}

// CheckUpload returns why req cannot be saved, or nil: its page must be
// in the File namespace, its action one of the upload log's and its
// version's hash a SHA-256.
func CheckUpload(req wiki.UploadRequest) error {
	if req.Page.Title.Namespace() != wiki.NSFile {
		return wiki.Errorf(wiki.KindInvalid, "%q is not in the %s namespace: files are uploaded to File: pages", req.Page.Title, wiki.NSFile)
	}
	switch req.Action {
	case wiki.UploadNew, wiki.UploadOverwrite, wiki.UploadRevert:
	default:
		return wiki.Errorf(wiki.KindInvalid, "%q is not an upload action", req.Action)
	}
	if !ValidSHA256(req.Version.SHA256) {
		return wiki.Errorf(wiki.KindInvalid, "%q is not a SHA-256 in lower-case hex", req.Version.SHA256)
	}
	return nil
}

// ModelLog is the log entry of req, a save that changes the content model
// of page pageID from old to new, as MediaWiki's contentmodel log.
func ModelLog(req wiki.SaveRequest, pageID int64, old, new wiki.ContentModel, at time.Time) wiki.LogEntry {
	return wiki.LogEntry{
		Type: wiki.LogContentModel, Action: "change", Time: at, UserID: req.UserID, UserName: req.UserName,
		Target: req.Title, PageID: pageID, Comment: req.Summary,
		Params: map[string]string{"old": string(old), "new": string(new)},
	}
}
