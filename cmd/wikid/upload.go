package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

const uploadUsage = "usage: wikid upload FILE… [--title NAME] [--summary TEXT] [--user NAME]"

// uploadCommand uploads files, each as File:its name (or --title, for one
// file), as any upload: a new version when the file exists, the same
// checks of content, the same log. A file that fails is reported and the
// others go on; the exit status is 1 if any failed.
func uploadCommand(ctx context.Context, cfg config.Config, log *slog.Logger, files []string, title, summary, user string, stdout, stderr io.Writer) error {
	if len(files) == 0 {
		return errors.New(uploadUsage)
	}
	if title != "" && len(files) != 1 {
		return errors.New("--title names the file of one upload; give one FILE with it")
	}
	a, ed, err := openAs(ctx, cfg, log, "upload", user)
	if err != nil {
		return err
	}
	defer a.Close()
	rules := cfg.TitleRules()
	failed := 0
	for _, path := range files {
		name := title
		if name == "" {
			name = filepath.Base(path)
		}
		t, err := rules.Parse("File:" + strings.TrimPrefix(name, "File:"))
		if err == nil && t.Namespace() != wiki.NSFile {
			err = errors.New("a file name may not name a namespace")
		}
		var out engine.UploadOutcome
		if err == nil {
			out, err = uploadFile(ctx, a.Engine, cfg, path, t, summary, ed)
		}
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "%s: %s\n", path, wiki.Message(err))
			if wiki.KindOf(err) == wiki.KindInternal {
				log.Error("upload failed", "file", path, "err", err)
			}
			continue
		}
		what := "new version"
		if out.Created {
			what = "new file"
		}
		fmt.Fprintf(stdout, "%s: %s (%s, %d bytes, %s)\n", path, string(out.Page.Title), out.Version.MIME, out.Version.Size, what)
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d files were not uploaded", failed, len(files))}
	}
	return nil
}

// uploadFile reads one file, within max_upload_bytes, and uploads it.
func uploadFile(ctx context.Context, eng *engine.Engine, cfg config.Config, path string, t wiki.Title, summary string, ed engine.Editor) (engine.UploadOutcome, error) {
	f, err := os.Open(path)
	if err != nil {
		return engine.UploadOutcome{}, &wiki.Error{Kind: wiki.KindInvalid, Msg: err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, cfg.MaxUploadBytes+1))
	if err != nil {
		return engine.UploadOutcome{}, &wiki.Error{Kind: wiki.KindInvalid, Msg: err.Error()}
	}
	if int64(len(data)) > cfg.MaxUploadBytes {
		return engine.UploadOutcome{}, wiki.Errorf(wiki.KindTooLarge, "larger than max_upload_bytes (%d bytes)", cfg.MaxUploadBytes)
	}
	return eng.Upload(ctx, engine.Upload{Title: t, Data: data, Comment: summary, Editor: ed})
}
